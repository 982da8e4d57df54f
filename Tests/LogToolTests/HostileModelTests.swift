import Foundation
import JSONDocument
import Testing

/// A model on disk is read as Spec/model.md 2.2 and 2.5 say: its files only when they are
/// regular files, never through a symbolic link inside the bundle, and bounded; a Core Data
/// store only when it is a regular file. Each case runs logtool as a child process that is killed
/// after a minute, so that a reader that waits (a FIFO named `contents` or `store.sqlite` blocked
/// it forever) fails the test instead of the suite.
@Suite("Hostile model and store files")
struct HostileModelTests {
    /// A bundle `M.xcdatamodeld` in a scratch folder with the version `M` whose `contents` is
    /// the Single model; `change` alters it before the run. The error `inspect --json` reports.
    static func inspect(_ change: (URL) throws -> Void) throws -> (code: JSONValue?, file: JSONValue?, run: ChildRun) {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let bundle = scratch.appendingPathComponent("M.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle.appendingPathComponent("M.xcdatamodel"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Run.packageRoot.appendingPathComponent("Fixtures/models/Single.xcdatamodeld/Single.xcdatamodel/contents"),
            to: bundle.appendingPathComponent("M.xcdatamodel/contents"))
        try change(bundle)
        let run = try ChildProcess.run(
            Run.binary, ["inspect", "--json", bundle.path], scratch: scratch, killAfterSeconds: 60, killAboveMegabytes: 1_024)
        let document = try? JSONParser.parse(Array(run.output.utf8.prefix { $0 != UInt8(ascii: "\n") }))
        return (document?[JSONPointer(["errors", "0", "code"])], document?[JSONPointer(["errors", "0", "file"])], run)
    }

    @Test("a contents file that is a FIFO is unreadable, not waited for")
    func fifo() throws {
        let result = try Self.inspect { bundle in
            let contents = bundle.appendingPathComponent("M.xcdatamodel/contents")
            try FileManager.default.removeItem(at: contents)
            #expect(mkfifo(contents.path, 0o600) == 0)
        }
        #expect(result.run.killed == nil, "\(result.run.killed ?? "")")
        #expect(result.code == .string("datamodel.unreadable"), "\(result.run.output)")
    }

    @Test("a contents file inside the bundle that is a symbolic link is unreadable, not followed")
    func linkedContents() throws {
        let result = try Self.inspect { bundle in
            let contents = bundle.appendingPathComponent("M.xcdatamodel/contents")
            try FileManager.default.moveItem(at: contents, to: bundle.deletingLastPathComponent().appendingPathComponent("elsewhere"))
            try FileManager.default.createSymbolicLink(atPath: contents.path, withDestinationPath: "../../elsewhere")
        }
        #expect(result.code == .string("datamodel.unreadable"), "\(result.run.output)")
        #expect(result.file?.stringValue?.hasSuffix("M.xcdatamodeld/M.xcdatamodel/contents") == true, "\(result.run.output)")
    }

    @Test(".xccurrentversion: a link is unreadable; 16 MiB is read, one byte more is too large")
    func currentVersion() throws {
        let linked = try Self.inspect { bundle in
            try FileManager.default.createSymbolicLink(
                atPath: bundle.appendingPathComponent(".xccurrentversion").path,
                withDestinationPath: Run.packageRoot.appendingPathComponent("Fixtures/models/Inheritance.xcdatamodeld/.xccurrentversion").path)
        }
        #expect(linked.code == .string("datamodel.unreadable"), "\(linked.run.output)")
        for (size, code) in [(16 * 1024 * 1024, "datamodel.unreadable"), (16 * 1024 * 1024 + 1, "datamodel.too-large")] {
            // Spaces are no property list: at the limit the file is read and refused as unparseable.
            let result = try Self.inspect { bundle in
                try Data(repeating: 0x20, count: size).write(to: bundle.appendingPathComponent(".xccurrentversion"))
            }
            #expect(result.code == .string(code), "\(size) bytes: \(result.run.output.prefix(500))")
            #expect(result.file?.stringValue?.hasSuffix("M.xcdatamodeld/.xccurrentversion") == true)
        }
    }

    @Test("a Core Data store that is a FIFO is refused by inspect and --store-metadata, not waited for")
    func storeFIFO() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let store = scratch.appendingPathComponent("store.sqlite")
        #expect(mkfifo(store.path, 0o600) == 0)
        let cloud = Run.packageRoot.appendingPathComponent("Fixtures/folders/example/cloud/MainStore").path
        for (arguments, code) in [
            (["inspect", store.path], "file.unreadable"), (["merge", "--store-metadata", store.path, cloud], "coredata.unreadable-store"),
        ] {
            let run = try ChildProcess.run(Run.binary, arguments, scratch: scratch, killAfterSeconds: 60, killAboveMegabytes: 1_024)
            #expect(run.killed == nil, "\(arguments): \(run.killed ?? "")")
            #expect(run.output.contains("[\(code)]") || run.output.contains(code), "\(arguments): \(run.output.prefix(500))")
        }
    }
}
