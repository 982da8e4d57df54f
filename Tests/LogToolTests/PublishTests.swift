import Foundation
import Testing
import LogToolCore
import TemporaryFiles

/// Every command that writes a file or folder publishes it through one primitive
/// (Spec/README.md 6.1): a destination that appears after the command checked it, while the
/// result was written, is never overwritten; the command says so and exits 2, and leaves no
/// staged file behind.
@Suite("Publishing a result", .serialized)
struct PublishTests {
    static let root = Run.packageRoot.path
    static let folder = "\(root)/Fixtures/merge/baseline-covers/cloud/E"

    /// The commands, each with the destination it writes given as `DEST`, and the code it names.
    static let commands: [(name: String, arguments: [String], code: String)] = [
        ("merge --out", ["merge", "--out", "DEST", folder], "merge.destination-exists"),
        ("merge --sqlite", ["merge", "--sqlite", "DEST", folder], "sqlite.destination-exists"),
        ("convert", ["convert", folder, "DEST"], "convert.destination-exists"),
        ("rebase", ["rebase", folder, "--out", "DEST"], "rebase.destination-exists"),
        ("generate", ["generate", "DEST", "--changes", "50", "--objects", "10"], "convert.destination-exists"),
        ("timeline", ["timeline", folder, "-o", "DEST"], "timeline.destination-exists"),
        ("verify --write-accept", ["verify", "--write-accept", "DEST", folder], "verify.accept-list-exists"),
    ]

    @Test("a destination created after the check is never overwritten", arguments: commands.indices)
    func createdAfterTheCheck(_ index: Int) throws {
        let (name, arguments, code) = Self.commands[index]
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("publish-\(UUID().uuidString)").resolvingSymlinksInPath()
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let destination = scratch.appendingPathComponent("result")
        let theirs = Data("another writer's file\n".utf8)
        // Another writer publishes at the destination right before this command does.
        TemporaryFiles.setBeforePublish { url in
            if url.standardizedFileURL.path == destination.path { _ = FileManager.default.createFile(atPath: url.path, contents: theirs) }
        }
        defer { TemporaryFiles.setBeforePublish(nil) }
        let run = LogTool.runCapturing(arguments: arguments.map { $0 == "DEST" ? destination.path : $0 })
        #expect(run.status == 2, "\(name): \(run.stderr)")
        #expect(run.stderr.contains(code) && run.stderr.contains(destination.path), "\(name): \(run.stderr)")
        #expect(FileManager.default.contents(atPath: destination.path) == theirs, "\(name) replaced the file that appeared")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["result"], "\(name) left a staged file behind")
    }

    @Test("with --force the destination that appeared is replaced whole", arguments: [0, 1, 5, 6])
    func forced(_ index: Int) throws {
        let (name, arguments, _) = Self.commands[index]
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("publish-\(UUID().uuidString)").resolvingSymlinksInPath()
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let destination = scratch.appendingPathComponent("result")
        TemporaryFiles.setBeforePublish { url in
            if url.standardizedFileURL.path == destination.path { _ = FileManager.default.createFile(atPath: url.path, contents: Data("theirs\n".utf8)) }
        }
        defer { TemporaryFiles.setBeforePublish(nil) }
        let run = LogTool.runCapturing(arguments: arguments.map { $0 == "DEST" ? destination.path : $0 } + ["--force"])
        #expect(run.status == 0, "\(name): \(run.stderr)")
        #expect(FileManager.default.contents(atPath: destination.path) != Data("theirs\n".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["result"], "\(name) left a staged file behind")
    }
}
