import Foundation
import Testing
import EnsembleModel
import JSONDocument
import CloudFolder

/// A scratch folder removed when the test ends.
final class ScratchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cloudfolder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func write(_ path: String, _ text: String) throws {
        let file = url.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
    }

    func folder(_ path: String) throws {
        try FileManager.default.createDirectory(at: url.appendingPathComponent(path), withIntermediateDirectories: true)
    }
}

func event(store: String, revision: Int64, globalCount: Int64) -> String {
    #"{"uniqueIdentifier":"u\#(globalCount)","type":200,"globalCount":\#(globalCount),"timestamp":"1","storeIdentifier":"\#(store)","revisionsByStoreIdentifier":{"\#(store)":\#(revision)}}"#
}

let registration = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0"><dict><key>storeIdentifier</key><string>A</string><key>leechDate</key><date>2024-01-02T03:04:05Z</date></dict></plist>
    """

@Suite("Cloud-folder scanner")
struct CloudFolderScannerTests {
    @Test("symbolic links are reported as debris and never followed, even to a valid event outside the folder")
    func symlinksNotFollowed() throws {
        let scratch = try ScratchFolder()
        try scratch.write("outside/1_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 1))
        try scratch.write("E/events/0_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 0))
        try FileManager.default.createSymbolicLink(
            atPath: scratch.url.appendingPathComponent("E/events/1_A_1.cdeevent").path,
            withDestinationPath: scratch.url.appendingPathComponent("outside/1_A_0.cdeevent").path)
        try FileManager.default.createSymbolicLink(
            atPath: scratch.url.appendingPathComponent("E/data").path,
            withDestinationPath: scratch.url.appendingPathComponent("outside").path)
        let listings = try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path)
        let contents = EnsembleContents.read(try #require(listings.first))
        #expect(contents.events.map(\.entry.file) == ["events/0_A_0.cdeevent"])
        #expect(contents.debris.map(\.path).sorted() == ["data", "events/1_A_1.cdeevent"])
        #expect(contents.debris.allSatisfy { $0.kind == .symlink })
        #expect(contents.dataFiles.isEmpty)
    }

    @Test("below a listed folder, a path whose name starts with a combining mark is still opened a name at a time")
    func combiningMarkAfterSlash() throws {
        let scratch = try ScratchFolder()
        try scratch.write("E/events/0_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 0))
        try scratch.write("outside/x", "outside")
        // "\u{301}link" is a link to outside/: a reader opening below E/ never follows it, even
        // though, compared as characters, the "/" before it is not a "/".
        try FileManager.default.createSymbolicLink(
            atPath: scratch.url.appendingPathComponent("E/\u{301}link").path, withDestinationPath: scratch.url.appendingPathComponent("outside").path)
        let listing = try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first)
        let error = #expect(throws: FormatError.self) { try EventFileReader.readBytes(listing.file("\u{301}link/x"), limit: 100) }
        // The reason is the link's, not that of a descriptor closed on the way out.
        #expect([ENOTDIR, ELOOP].contains { error?.message.contains(String(cString: strerror($0))) == true }, "\(String(describing: error))")
        // The same path given by the user is theirs, and is opened by path.
        let file = scratch.url.appendingPathComponent("E/\u{301}link/x", isDirectory: false)
        #expect(try EventFileReader.readBytes(at: file, limit: 100) == Array("outside".utf8))
    }

    @Test("below a listed folder, a subfolder swapped for a link after a first read is never followed, nor a link inside the folder")
    func subfolderKeptOpen() throws {
        let scratch = try ScratchFolder()
        try scratch.write("E/events/a", "first a")
        try scratch.write("E/events/b", "first b")
        try scratch.write("outside/b", "outside")
        try scratch.write("other/b", "other b")
        let events = scratch.url.appendingPathComponent("E/events").path
        let listing = try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first)
        func read(_ name: String) throws -> [UInt8] { try EventFileReader.readBytes(listing.file("events/\(name)"), limit: 100) }
        // The first file opens events/ and keeps it.
        #expect(try read("a") == Array("first a".utf8))
        // events/ swapped for a link to outside/ after that: the kept folder is not used, the
        // link is not followed.
        #expect(rename(events, scratch.url.appendingPathComponent("E/moved").path) == 0)
        try FileManager.default.createSymbolicLink(atPath: events, withDestinationPath: scratch.url.appendingPathComponent("outside").path)
        let error = #expect(throws: FormatError.self) { try read("b") }
        #expect(error?.code == .fileUnreadable, "\(String(describing: error))")
        // Replaced by another folder: its files are read, as they would be without the kept one.
        #expect(unlink(events) == 0)
        #expect(rename(scratch.url.appendingPathComponent("other").path, events) == 0)
        #expect(try read("b") == Array("other b".utf8))
        // A link that stays inside the folder is a link all the same.
        try FileManager.default.createSymbolicLink(atPath: scratch.url.appendingPathComponent("E/linked").path, withDestinationPath: "events")
        let linked = #expect(throws: FormatError.self) { try EventFileReader.readBytes(listing.file("linked/b"), limit: 100) }
        #expect(linked?.code == .fileUnreadable, "\(String(describing: linked))")
    }

    @Test("a file of a listing never lies outside the folder: a path through '..' is refused, not opened")
    func neverAboveTheFolder() throws {
        let scratch = try ScratchFolder()
        try scratch.write("E/events/0_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 0))
        try scratch.write("outside/x", "outside")
        let listing = try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first)
        // Even a `..` that would stay inside: a listing never makes one.
        for path in ["../outside/x", "events/../../outside/x", "events/../events/0_A_0.cdeevent", "..", "events/.."] {
            let error = #expect(throws: FormatError.self, "\(path)") { try EventFileReader.readBytes(listing.file(path), limit: 100) }
            #expect(error?.code == .fileUnreadable, "\(path)")
        }
        // Empty names and `.` stay where they are, as in any path.
        let bytes = try EventFileReader.readBytes(listing.file("events/0_A_0.cdeevent"), limit: 10_000)
        for path in ["./events/0_A_0.cdeevent", "events//0_A_0.cdeevent", "events/./0_A_0.cdeevent", "/events/0_A_0.cdeevent/"] {
            #expect(try EventFileReader.readBytes(listing.file(path), limit: 10_000) == bytes, "\(path)")
        }
        // A name of three dots is a name.
        try scratch.write("E/events/...", "dots")
        #expect(try EventFileReader.readBytes(listing.file("events/..."), limit: 100) == Array("dots".utf8))
    }

    @Test("a listing's files are read through the folder it listed, even when another folder has taken its path since")
    func readThroughTheFolderListed() throws {
        let scratch = try ScratchFolder()
        let path = scratch.url.appendingPathComponent("E").path
        try scratch.write("E/events/0_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 0))
        try scratch.write("E/stores/A", registration)
        let first = try #require(try CloudFolderScanner().scan(path).first)
        // The folder moves away and another takes its path, with other files under the same
        // names, and is listed in turn.
        #expect(rename(path, scratch.url.appendingPathComponent("moved").path) == 0)
        try scratch.write("E/events/0_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 7))
        try scratch.write("E/stores/A", "not a registration")
        let second = try #require(try CloudFolderScanner().scan(path).first)
        // Each listing reads its own folder: a reader that found a folder from the path would
        // read the second folder's files for the first listing.
        #expect(try EventFileReader.readBytes(first.file("stores/A"), limit: 10_000) == Array(registration.utf8))
        let firstContents = EnsembleContents.read(first)
        #expect(firstContents.problems.isEmpty, "\(firstContents.problems)")
        #expect(firstContents.events.map { $0.entry.event?.globalCount } == [0])
        #expect(try EventFileReader.readBytes(second.file("stores/A"), limit: 10_000) == Array("not a registration".utf8))
        #expect(EnsembleContents.read(second).events.map { $0.entry.event?.globalCount } == [7])
    }

    @Test("a root holding ensembles lists each; an ensemble folder lists itself as '.'")
    func rootAndEnsemble() throws {
        let scratch = try ScratchFolder()
        try scratch.write("Two/events/0_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 0))
        try scratch.folder("One/stores")
        try scratch.folder("NotAnEnsemble/misc")
        let root = try CloudFolderScanner().scan(scratch.url.path)
        #expect(root.map(\.identifier) == ["One", "Two"])
        #expect(root.map(\.displayPath) == ["One", "Two"])
        let single = try CloudFolderScanner().scan(scratch.url.appendingPathComponent("Two").path)
        #expect(single.map(\.displayPath) == ["."])
    }

    @Test("data files in two-character partition folders are read where they are; misplaced names and second copies are debris")
    func partitionedDataFiles() throws {
        let scratch = try ScratchFolder()
        try scratch.write("E/data/AB12", "flat")
        try scratch.write("E/data/AB/AB12", "second copy")
        try scratch.write("E/data/CD/CD34", "partitioned")
        try scratch.write("E/data/CD/EF56", "misplaced")
        try scratch.write("E/data/CD/.DS_Store", "")
        try scratch.folder("E/data/CD/CD")
        try scratch.write("E/data/ABC/ABC1", "not a partition")
        try FileManager.default.createSymbolicLink(
            atPath: scratch.url.appendingPathComponent("E/data/GH").path, withDestinationPath: scratch.url.appendingPathComponent("E/data/CD").path)
        let listing = try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first)
        let contents = EnsembleContents.read(listing)
        #expect(contents.dataFiles.map { "\($0.name) \($0.file) \($0.bytes)" }.sorted() == ["AB12 data/AB12 4", "CD34 data/CD/CD34 11"])
        let debris = Dictionary(uniqueKeysWithValues: contents.debris.map { ($0.path, $0.kind) })
        #expect(
            debris == [
                "data/AB/AB12": .unknownName, "data/CD/EF56": .unknownName, "data/CD/.DS_Store": .systemFile, "data/CD/CD": .unknownName,
                "data/ABC": .unknownName, "data/GH": .symlink,
            ])
        #expect(contents.problems.isEmpty)
        #expect(try DataFileReader.content(listing.file("data/CD/CD34")) == Array("partitioned".utf8))
    }

    @Test("a folder without ensembles, and a missing path, are errors for the caller")
    func notACloudFolder() throws {
        let scratch = try ScratchFolder()
        try scratch.folder("misc")
        #expect(throws: FormatError.self) { try CloudFolderScanner().scan(scratch.url.path) }
        #expect(throws: FormatError.self) { try CloudFolderScanner().scan(scratch.url.appendingPathComponent("nope").path) }
    }

    @Test("the problems of a folder read without an order come in the order of their files' paths, every time")
    func problemsInPathOrder() throws {
        let scratch = try ScratchFolder()
        let files = (0..<16).map { "events/\($0)_A_\($0).cdeevent" }
        for file in files { try scratch.write("E/" + file, "{") }
        let listing = try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first)
        for _ in 0..<3 {
            let problems = EnsembleContents.read(listing).problems.compactMap { $0.location.file }
            let expected = files.sorted(by: utf8Precedes)
            #expect(problems == expected)
        }
    }

    @Test("store registrations are read; a name that disagrees with the content is a problem")
    func registrations() throws {
        let scratch = try ScratchFolder()
        try scratch.write("E/stores/A", registration)
        try scratch.write("E/stores/B", registration)
        try scratch.write("E/stores/C", "not a plist")
        let contents = EnsembleContents.read(try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first))
        #expect(contents.stores.map(\.storeIdentifier) == ["A", "B", "C"])
        #expect(contents.stores.map(\.leechDate) == [ISO8601DateFormatter().date(from: "2024-01-02T03:04:05Z"), nil, nil])
        #expect(contents.problems.map { $0.location.file } == ["stores/B", "stores/C"])
        #expect(contents.problems.allSatisfy { $0.code == .storeInvalid })
    }

    @Test("a multipart set with a missing part is incomplete, not unreadable")
    func incompleteMultipart() throws {
        let scratch = try ScratchFolder()
        try scratch.write("E/events/5_A_0_1of2.cdeevent", event(store: "A", revision: 0, globalCount: 5))
        let contents = EnsembleContents.read(try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first))
        let entry = try #require(contents.events.first?.entry)
        #expect(!entry.isComplete)
        #expect(entry.event == nil)
        #expect(contents.problems.isEmpty)
    }

    @Test("files of one base name that form neither one file nor one set are each reported, and are not an event")
    func duplicateParts() throws {
        let scratch = try ScratchFolder()
        try scratch.write("E/events/5_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 5))
        try scratch.write("E/events/5_A_0_1of2.cdeevent", event(store: "A", revision: 0, globalCount: 5))
        try scratch.write("E/events/6_A_1_1of2.cdeevent", event(store: "A", revision: 1, globalCount: 6))
        try scratch.write("E/events/6_A_1_2of3.cdeevent", #"{"changesByEntity":{}}"#)
        try scratch.write("E/events/7_A_2.cdeevent", event(store: "A", revision: 2, globalCount: 7))
        let contents = EnsembleContents.read(try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first))
        #expect(contents.events.map(\.entry.file) == ["events/7_A_2.cdeevent"])
        #expect(contents.problems.map(\.code) == Array(repeating: .v2DuplicatePart, count: 4))
        #expect(Set(contents.problems.compactMap(\.location.file)).count == 4)
    }

    @Test("files are never opened beyond the size limit")
    func sizeLimit() throws {
        let scratch = try ScratchFolder()
        try scratch.write("E/events/0_A_0.cdeevent", event(store: "A", revision: 0, globalCount: 0))
        var options = EventFileReader().jsonOptions
        options.maximumBytes = 16
        let listing = try #require(try CloudFolderScanner().scan(scratch.url.appendingPathComponent("E").path).first)
        let contents = EnsembleContents.read(listing, reader: EventFileReader(jsonOptions: options))
        #expect(contents.problems.map(\.code) == [.jsonTooLarge])
        #expect(contents.problems.first?.location.offset == 16)
    }

    #if os(Linux)
    @Test("a file longer than fstat said (as the system's /proc files are) is read whole, and never beyond the limit")
    func longerThanItsSize() throws {
        // /proc/self/cmdline has a size of 0 and the test's arguments as content, at least the
        // program's path and its NUL.
        let url = URL(fileURLWithPath: "/proc/self/cmdline")
        let bytes = try EventFileReader.readBytes(at: url, limit: 1 << 20)
        #expect(bytes.count > 1 && bytes.last == 0)
        #expect(bytes.starts(with: Array(CommandLine.arguments[0].utf8) + [0]))
        for limit in [0, 1, 2, 3, bytes.count - 1] {
            let error = #expect(throws: FormatError.self, "\(limit)") { try EventFileReader.readBytes(at: url, limit: limit) }
            #expect(error?.code == .jsonTooLarge && error?.location.offset == limit, "\(limit)")
        }
        #expect(try EventFileReader.readBytes(at: url, limit: bytes.count) == bytes)
    }
    #endif
}
