import Foundation
import Testing
import EnsembleModel
import CloudFolder

/// Collects what a streaming read hands over.
private final class Collector: EnsembleReadingSink {
    var baselines: [String] = []
    var baselineBodies: [NumberedEvent?] = []
    var chunks: [[EventFileEntry]] = []
    var bodies: [NumberedEvent?] = []
    /// Whether the sink says it is busy (nil: it never says).
    let alwaysBusy: Bool?

    init(alwaysBusy: Bool? = nil) { self.alwaysBusy = alwaysBusy }

    var busy: (@Sendable () -> Bool)? {
        guard let answer = alwaysBusy else { return nil }
        return { answer }
    }

    func read(baselines: [BaselineFileEntry], bodies: [NumberedEvent?]) {
        self.baselines = baselines.map(\.entry.file)
        baselineBodies = bodies
    }
    func read(events: [EventFileEntry], bodies: [NumberedEvent?]) {
        chunks.append(events)
        self.bodies += bodies
    }
}

@Suite("Streamed event files")
struct StreamedEventsTests {
    @Test("a folder read with its event files indexed, not listed, gives the same events, debris and problems, in name order")
    func sameAsListed() throws {
        let folder = try ScratchFolder()
        try folder.write("stores/A", registration)
        // Written out of order; global count 10 sorts after 9 as a number, not as text.
        for (store, revision, globalCount) in [("A", 3, 10), ("A", 1, 2), ("B", 1, 2), ("A", 2, 9)] as [(String, Int64, Int64)] {
            try folder.write("events/\(globalCount)_\(store)_\(revision).cdeevent", event(store: store, revision: revision, globalCount: globalCount))
        }
        try folder.write("events/11_A_4.cdeevent", "{ not json")
        try folder.write("events/12_A_5_1of2.cdeevent", event(store: "A", revision: 5, globalCount: 12))
        try folder.write("events/notes.txt", "debris")
        try folder.folder("baselines")

        let listed = try #require(try CloudFolderScanner().scan(folder.url.path).first)
        let indexed = try #require(try CloudFolderScanner().scan(folder.url.path, listsEvents: false).first)
        #expect(listed.eventsListed && !indexed.eventsListed)
        #expect(!indexed.entries.contains { $0.path.hasPrefix("events/") })

        let whole = EnsembleContents.read(listed, summarize: true)
        let collector = Collector()
        let streamed = EnsembleContents.read(indexed, summarize: true, sink: collector)
        let handed = collector.chunks.flatMap { $0 }
        #expect(handed.map(\.entry.file) == ["events/2_A_1.cdeevent", "events/2_B_1.cdeevent", "events/9_A_2.cdeevent", "events/10_A_3.cdeevent"])
        #expect(Set(handed.map(\.entry.file) + streamed.events.map(\.entry.file)) == Set(whole.events.map(\.entry.file)))
        #expect(streamed.events.map(\.entry.file).sorted() == ["events/11_A_4.cdeevent", "events/12_A_5_1of2.cdeevent"])
        #expect(streamed.debris == whole.debris)
        #expect(streamed.problems.map(\.description).sorted() == whole.problems.map(\.description).sorted())
        #expect(!whole.problems.isEmpty)
    }

    @Test("events of stores whose names differ only in normalisation are handed in UTF-8 byte order, every time")
    func normalisationApart() throws {
        let folder = try ScratchFolder()
        try folder.folder("baselines")
        // NFD ("e" and a combining accent) sorts before NFC ("\u{E9}") by bytes; Swift's `==`
        // calls the two names equal.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        for globalCount in 1...8 as ClosedRange<Int64> {
            for store in [composed, decomposed] {
                try folder.write("events/\(globalCount)_\(store)_0.cdeevent", event(store: store, revision: 0, globalCount: globalCount))
            }
        }
        let listing = try #require(try CloudFolderScanner().scan(folder.url.path).first)
        let expected = (1...8).flatMap { globalCount in [decomposed, composed].map { "events/\(globalCount)_\($0)_0.cdeevent" } }
        for _ in 0..<4 {
            let collector = Collector()
            let contents = EnsembleContents.read(listing, summarize: true, sink: collector)
            #expect(collector.chunks.flatMap { $0 }.map { Array($0.entry.file.utf8) } == expected.map { Array($0.utf8) })
            #expect(contents.problems.isEmpty, "\(contents.problems)")
        }
    }

    @Test("a sink that is always busy or never busy is handed the same chunks, events and bodies")
    func busySink() throws {
        let folder = try ScratchFolder()
        try folder.write("stores/A", registration)
        try folder.folder("baselines")
        // Three chunks of 64 and a few more, so that every chunk's files are shared out.
        for revision in 1...200 as ClosedRange<Int64> {
            try folder.write("events/\(revision)_A_\(revision).cdeevent", event(store: "A", revision: revision, globalCount: revision))
        }
        let listing = try #require(try CloudFolderScanner().scan(folder.url.path).first)
        var handed: [[[String]]] = []
        var bodies: [[NumberedEvent?]] = []
        for busy in [nil, false, true] as [Bool?] {
            let collector = Collector(alwaysBusy: busy)
            _ = EnsembleContents.read(listing, summarize: true, sink: collector)
            handed.append(collector.chunks.map { $0.map(\.entry.file) })
            bodies.append(collector.bodies)
        }
        #expect(handed[0].flatMap { $0 }.count == 200)
        #expect(handed[1] == handed[0] && handed[2] == handed[0])
        #expect(bodies[1] == bodies[0] && bodies[2] == bodies[0])
    }

    @Test("a sink is handed each baseline's changes in numbered form: the changes a whole read of it gives")
    func baselineBodies() throws {
        let folder = try ScratchFolder()
        try folder.write("stores/A", registration)
        func baseline(_ name: String, ids: [String]) -> String {
            let changes = ids.map { #"{"globalIdentifier":"\#($0)","type":100,"properties":[{"propertyName":"n","type":0,"value":"\#($0)!"}]}"# }
            let header = #""uniqueIdentifier":"\#(name)","type":100,"globalCount":3,"timestamp":"1","storeIdentifier":"A","revisionsByStoreIdentifier":{"A":2}"#
            return #"{\#(header),"changesByEntity":{"Item":[\#(changes.joined(separator: ","))]}}"#
        }
        try folder.write("baselines/3_B1.cdeevent", baseline("B1", ids: ["x", "y"]))
        try folder.write("baselines/3_B2.cdeevent", baseline("B2", ids: ["z"]))
        try folder.write("events/4_A_3.cdeevent", event(store: "A", revision: 3, globalCount: 4))
        let listing = try #require(try CloudFolderScanner().scan(folder.url.path).first)
        let whole = EnsembleContents.read(listing, summarize: false)
        let collector = Collector()
        _ = EnsembleContents.read(listing, summarize: true, sink: collector)
        // Handed in directory order, as read; matched by file.
        #expect(collector.baselines.sorted() == whole.baselines.map(\.entry.file).sorted() && collector.baselineBodies.count == 2)
        let bodies = Dictionary(uniqueKeysWithValues: zip(collector.baselines, collector.baselineBodies))
        for entry in whole.baselines {
            let numbered = try #require(bodies[entry.entry.file] ?? nil)
            let changes = try #require(entry.entry.event?.objectChanges)
            #expect(numbered.changes.map { numbered.string($0.identifier) } == changes.map(\.globalIdentifier))
            let attributes = changes.flatMap { $0.propertyChanges.compactMap { if case .attribute(let value) = $0.value { value } else { nil } } }
            #expect(numbered.attributes == attributes)
        }
    }
}
