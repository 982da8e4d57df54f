import Foundation
import Testing
import JSONDocument
import EnsembleModel
import CloudFolder

/// The original 1.x logs and their model, relative to the package root.
enum Originals {
    static let model = "Fixtures/external/ensembles-1x/models/CDEStoreModificationEventTestsModel.xcdatamodeld"
    static let folder = "Fixtures/external/ensembles-1x/Integrator Test Fixtures"

    static var logs: [String] {
        let root = Run.packageRoot.appendingPathComponent(folder)
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var result: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".json") { result.append("\(folder)/\(path)") }
        }
        return result.sorted()
    }
}

func scratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("convert-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Every event of a folder, in folder order, read with the reader the tests use.
func events(in folder: URL, model: Bool = false) throws -> [Event] {
    let listings = try CloudFolderScanner().scan(folder.path)
    return listings.flatMap { listing in
        let contents = EnsembleContents.read(listing)
        return contents.events.compactMap(\.entry.event) + contents.baselines.compactMap(\.entry.event)
    }
}

@Suite("logtool convert")
struct ConvertTests {
    @Test("each original 1.x log converts to a v2 folder that inspect reads back completely", arguments: Originals.logs)
    func originalLogs(log: String) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let destination = scratch.appendingPathComponent("out").path
        let run = try Run("convert", "--lenient", "--model", Originals.model, log, destination)
        #expect(run.status == 0, "\(run.stderr)")
        let inspect = try Run("inspect", "--json", destination)
        #expect(inspect.status == 0)
        let report = try JSONParser.parse(inspect.stdout)
        #expect(report[JSONPointer(["summary", "unreadable"])] == JSONValue(Int64(0)))
        let source = try Run("inspect", "--json", "--lenient", "--model", Originals.model, log)
        let sourceEvents = try JSONParser.parse(source.stdout)[JSONPointer(["events"])]?.arrayValue ?? []
        #expect(report[JSONPointer(["summary", "events"])] == JSONValue(Int64(sourceEvents.count)))
    }

    @Test("a v2 folder converts to a v2 folder with the same events; the source is untouched")
    func folderToFolder() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = Run.packageRoot.appendingPathComponent("Fixtures/folders/example/cloud")
        let before = try Run("inspect", "--json", source.path).stdout
        let destination = scratch.appendingPathComponent("v2").path
        let run = try Run("convert", "--json", source.path, destination)
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try JSONParser.parse(run.stdout)
        #expect(summary[JSONPointer(["skipped"])]?.arrayValue?.count == 4)
        #expect(summary[JSONPointer(["files"])]?.arrayValue?.count == 33)
        #expect(try events(in: URL(fileURLWithPath: destination)) == (try events(in: source)))
        #expect(try Run("inspect", "--json", source.path).stdout == before)
    }

    @Test("writing v1 needs the model, because the result is read back: usage error without it")
    func v1NeedsModel() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try Run("convert", "--to", "v1", "Fixtures/folders/example/cloud", scratch.appendingPathComponent("v1").path)
        #expect(run.status == 2)
        #expect(run.stderr.contains("v1.model-required"))
    }

    @Test("an existing destination is refused with exit 2 and left as it was")
    func destinationExists() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try Run("convert", "Fixtures/folders/example/cloud", scratch.path)
        #expect(run.status == 2)
        #expect(run.stderr.contains("convert.destination-exists"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    @Test("a folder with an unreadable file is not converted: exit 1, nothing written")
    func unreadableSource() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try Run("convert", "Fixtures/folders/damaged/cloud", scratch.appendingPathComponent("out").path)
        #expect(run.status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    /// Code, file and pointer of each error of a `convert --json` run.
    static func errors(of run: Run) throws -> [[String?]] {
        (try JSONParser.parse(run.stdout)[JSONPointer(["errors"])]?.arrayValue ?? []).map { error in
            ["code", "file", "pointer"].map { error[JSONPointer([$0])]?.stringValue }
        }
    }

    @Test(
        "a binary event with sections of unknown type is refused as lossy at \"\", to JSON or binary, alone or in a folder",
        arguments: ["deflated-and-unknown-section.bin", "minor-7-unknown-flags.bin"])
    func unknownSections(file: String) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = "Fixtures/v2-binary/noncanonical/\(file)"
        let ensemble = scratch.appendingPathComponent("ensemble")
        let copy = ensemble.appendingPathComponent("events/1_S1_0.cdeevent")
        try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent(source), to: copy)
        for (input, reported) in [(source, source), (ensemble.path, copy.path)] {
            for encoding in ["json", "binary"] {
                let destination = scratch.appendingPathComponent("out").path
                let run = try Run("convert", "--json", "--encoding", encoding, input, destination)
                #expect(run.status == 1, "\(input) as \(encoding)")
                #expect(try Self.errors(of: run) == [["convert.lossy", reported, ""]])
                #expect(!FileManager.default.fileExists(atPath: destination))
            }
        }
    }

    @Test("a binary event's unknown member that v1 has no place for is refused at its pointer in the event, as for JSON")
    func binaryUnknownMemberToV1() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The entity of Spec/v2-binary.md example 3, so that the event passes the model check.
        let model = scratch.appendingPathComponent("Gauge.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let attributes = [("max", "Integer 64"), ("min", "Integer 64"), ("reading", "Double"), ("zero", "Double")].map { name, type in
            #"<attribute name="\#(name)" optional="YES" attributeType="\#(type)"/>"#
        }
        try Data(#"<?xml version="1.0"?><model><entity name="Gauge">\#(attributes.joined())</entity></model>"#.utf8)
            .write(to: model.appendingPathComponent("contents"))
        for source in ["example-3.bin", "example-3.json"].map({ "Fixtures/v2-binary/valid/\($0)" }) {
            let destination = scratch.appendingPathComponent("out").path
            let run = try Run("convert", "--json", "--to", "v1", "--model", model.path, source, destination)
            #expect(run.status == 1, "\(source): \(run.stderr)")
            #expect(try Self.errors(of: run) == [["convert.lossy", source, "/changesByEntity/Gauge/0/properties/3/x-unit"]])
            #expect(!FileManager.default.fileExists(atPath: destination))
        }
    }

    /// A v1 log large enough that a conversion takes a noticeable time.
    static func largeLog(at url: URL, events: Int) throws {
        var text = "["
        for i in 0..<events {
            if i > 0 { text += "," }
            text += #"{"store":"S\#(i % 3)","revision":\#(i / 3),"globalCount":\#(i),"timestamp":\#(i).5,"changes":["#
            text += (0..<10).map { j in
                #"{"entity":"Parent","id":"p\#(i)-\#(j)","type":"insert","properties":{"name":"n\#(j)","date":\#(j).25,"friends":{"add":["c\#(j)"]}}}"#
            }.joined(separator: ",")
            text += "]}"
        }
        try Data((text + "]").utf8).write(to: url)
    }

    @Test("killing convert at any moment leaves no partial destination and an unchanged source")
    func sigkill() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let log = scratch.appendingPathComponent("large.json")
        try Self.largeLog(at: log, events: 300)
        let sourceBefore = try Data(contentsOf: log)
        let model = Run.packageRoot.appendingPathComponent(Originals.model).path

        let started = Date()
        let full = try Run("convert", "--model", model, log.path, scratch.appendingPathComponent("full").path)
        let duration = Date().timeIntervalSince(started)
        #expect(full.status == 0, "\(full.stderr)")
        let expectedEvents = try events(in: scratch.appendingPathComponent("full")).count
        #expect(expectedEvents == 300)

        for step in 1...8 {
            let destination = scratch.appendingPathComponent("killed-\(step)")
            let process = try Self.startConvert(model: model, log.path, destination.path)
            Thread.sleep(forTimeInterval: duration * Double(step) / 9)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if FileManager.default.fileExists(atPath: destination.path) {
                // The rename happened before the kill: the destination must then be complete.
                #expect(try events(in: destination).count == expectedEvents, "step \(step)")
            }
            #expect(try Data(contentsOf: log) == sourceBefore)
        }
    }

    /// `logtool convert` started in the background, its output discarded.
    static func startConvert(model: String, _ source: String, _ destination: String) throws -> Process {
        let process = Process()
        process.executableURL = Run.binary
        process.arguments = ["convert", "--model", model, source, destination]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test("SIGINT or SIGTERM during convert removes its staging folder: nothing is left behind", arguments: [SIGINT, SIGTERM])
    func interrupted(signalNumber: Int32) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let log = scratch.appendingPathComponent("large.json")
        try Self.largeLog(at: log, events: 3000)
        let model = Run.packageRoot.appendingPathComponent(Originals.model).path
        let destination = scratch.appendingPathComponent("out")
        let process = try Self.startConvert(model: model, log.path, destination.path)
        // Wait until the staging folder exists, then interrupt (up to two minutes: on a loaded
        // machine the debug build reads the log for more than the ten seconds this once allowed).
        var staged = false
        for _ in 0..<24_000 where process.isRunning {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []
            if names.contains(where: { $0.hasPrefix(".out.partial-") }) { staged = true; break }
            Thread.sleep(forTimeInterval: 0.005)
        }
        kill(process.processIdentifier, signalNumber)
        process.waitUntilExit()
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).filter { $0 != "large.json" }
        if staged && process.terminationStatus == 128 + signalNumber {
            #expect(left.isEmpty, "left behind: \(left)")
        } else {
            // The conversion finished before the signal arrived: then only the complete result is there.
            #expect(left == ["out"] || left.isEmpty, "\(left), status \(process.terminationStatus)")
        }
        #expect(staged, "the staging folder never appeared, so the interruption was not exercised")
    }
}

@Suite("convert --encoding binary")
struct BinaryConvertTests {
    @Test("a folder converted to binary events with blob containers merges and inspects exactly like the original")
    func binaryFolder() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let binary = scratch.appendingPathComponent("binary").path
        let run = try Run("convert", "--encoding", "binary", "--blob-container", "Fixtures/folders/example/cloud", binary)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try events(in: URL(fileURLWithPath: binary)) == (try events(in: Run.packageRoot.appendingPathComponent("Fixtures/folders/example/cloud"))))
        #expect(try Run("merge", binary).stdout == (try Run("merge", "Fixtures/folders/example/cloud").stdout))
        let verify = try Run("verify", "--json", binary)
        #expect(verify.status == 0)
        let back = scratch.appendingPathComponent("json").path
        #expect(try Run("convert", binary, back).status == 0)
        #expect(try events(in: URL(fileURLWithPath: back)) == (try events(in: URL(fileURLWithPath: binary))))
    }
}
