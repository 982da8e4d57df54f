import Foundation
import Testing
import EnsembleModel
import EnsemblesToolkit

/// The golden rebase cases of `Fixtures/rebase` (Spec/merge.md 13), run as Fixtures/rebase/README.md
/// tells a runner to, and the conformance property on generated folders.
@Suite("rebase")
struct RebaseTests {
    static let root = Run.packageRoot.appendingPathComponent("Fixtures/rebase")
    static let cases = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
        .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent("\($0)/case.json").path) }.sorted()

    /// Regular files below `url`, by relative path.
    static func tree(_ url: URL) -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
        while let item = enumerator?.nextObject() as? URL {
            guard (try? item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            result[String(item.standardizedFileURL.path.dropFirst(url.standardizedFileURL.path.count + 1))] = try? Data(contentsOf: item)
        }
        return result
    }

    @Test("each case gives exactly the expected folder, summary or error", arguments: cases)
    func fixture(name: String) throws {
        let folder = Self.root.appendingPathComponent(name)
        let spec = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("case.json"))) as? [String: Any]
        let command = try #require(spec?["command"] as? [String])
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rebase-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("OUT")
        let run = try Run(arguments: command.map { $0 == "OUT" ? out.path : $0 }, in: folder)
        #expect(Int(run.status) == spec?["exitCode"] as? Int, "\(run.stderr)")
        let expected = folder.appendingPathComponent("expected")
        if FileManager.default.fileExists(atPath: expected.appendingPathComponent("out").path) {
            #expect(Self.tree(out) == Self.tree(expected.appendingPathComponent("out")))
            let input = try #require(command.dropFirst().first)
            let before = try Run(arguments: ["merge", input], in: folder), after = try Run(arguments: ["merge", out.path], in: folder)
            #expect(before.status == 0 && before.stdout == after.stdout)
        } else {
            #expect(!FileManager.default.fileExists(atPath: out.path))
        }
        if let summary = try? Data(contentsOf: expected.appendingPathComponent("summary.json")) {
            #expect(run.stdout == String(decoding: summary, as: UTF8.self) + "\n")
        }
        if let error = try? JSONSerialization.jsonObject(with: Data(contentsOf: expected.appendingPathComponent("error.json"))) as? [String: Any] {
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains(try #require(error["code"] as? String)))
        }
    }

    @Test("a generated folder with concurrent stores, blobs and deletes rebases to a folder that merges to the same state and verifies clean")
    func generated() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rebase-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = scratch.appendingPathComponent("g"), rebased = scratch.appendingPathComponent("r")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let generate = try Run(
            "generate", source.path, "--stores", "4", "--objects", "150", "--changes", "1500", "--changes-per-event", "20",
            "--blob-bytes", "12000", "--concurrency", "0.5", "--seed", "11")
        #expect(generate.status == 0, "\(generate.stderr)")
        let model = source.appendingPathComponent("Model.xcdatamodeld").path
        let rebase = try Run("rebase", source.appendingPathComponent("cloud").path, "--out", rebased.path, "--model", model, "--encoding", "binary")
        #expect(rebase.status == 0, "\(rebase.stderr)")
        let before = try Run("merge", source.appendingPathComponent("cloud").path, "--model", model)
        let after = try Run("merge", rebased.path, "--model", model)
        #expect(before.status == 0 && after.status == 0 && before.stdout == after.stdout)
        let verify = try Run("verify", rebased.path, "--model", model, "--strict")
        #expect(verify.status == 0, "\(verify.stdout)")
    }

    @Test("generate gives the same bytes for the same seed")
    func deterministic() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        for name in ["a", "b"] {
            let run = try Run("generate", scratch.appendingPathComponent(name).path, "--changes", "500", "--seed", "5", "--blob-bytes", "11000")
            #expect(run.status == 0, "\(run.stderr)")
        }
        let a = Self.tree(scratch.appendingPathComponent("a")), b = Self.tree(scratch.appendingPathComponent("b"))
        #expect(a.count > 10 && a == b)
    }

    /// Rebases the worked example (Fixtures/rebase/fold-two-stores, Spec/merge.md 13.9) with a
    /// fault injected, and returns the codes and messages of the refusal; nothing may be published
    /// and no staging folder left behind.
    static func refusal(_ fault: RebaseFaults.Fault, binary: Bool = false) throws -> [(code: String, message: String)] {
        let scratch = try scratchDirectory().resolvingSymlinksInPath()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("OUT")
        RebaseFaults.set(fault, for: out)
        defer { RebaseFaults.set(nil, for: out) }
        do {
            _ = try Ensemble(at: root.appendingPathComponent("fold-two-stores/cloud")).rebase(to: out, binary: binary)
            Issue.record("the rebase with a fault was published")
            return []
        } catch {
            #expect(error.kind == .failure)
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty, "a folder was published or left behind")
            return error.problems.map { ($0.code.rawValue, $0.message) }
        }
    }

    @Test("the same rebase without a fault publishes (the faults below are what the checks catch)")
    func noFault() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("OUT")
        RebaseFaults.set(RebaseFaults.Fault(header: { _ in }, changes: { _ in }, staged: { _ in }), for: out)
        defer { RebaseFaults.set(nil, for: out) }
        #expect(try Ensemble(at: Self.root.appendingPathComponent("fold-two-stores/cloud")).rebase(to: out).written)
        #expect(Self.tree(out) == Self.tree(Self.root.appendingPathComponent("fold-two-stores/expected/out")))
    }

    @Test("a baseline changed on disk after it was written is refused (Spec/merge.md 13.7 step 4)")
    func baselineChangedOnDisk() throws {
        let problems = try Self.refusal(
            RebaseFaults.Fault(staged: { ensemble in
                let folder = ensemble.appendingPathComponent("baselines")
                guard let name = try? FileManager.default.contentsOfDirectory(atPath: folder.path).first,
                    var bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
                else { return }
                // Still a valid event: a title "one-b" becomes "one-c".
                if let range = bytes.range(of: Data("one-b".utf8)) { bytes.replaceSubrange(range, with: Data("one-c".utf8)) }
                try? bytes.write(to: folder.appendingPathComponent(name))
            }))
        #expect(problems.map(\.code) == ["rebase.verification-failed"])
        #expect(problems.first?.message.contains("bytes written") == true, "\(problems)")
    }

    @Test("a baseline written with another header is refused (Spec/merge.md 13.7 step 4)")
    func baselineWithAnotherHeader() throws {
        let problems = try Self.refusal(RebaseFaults.Fault(header: { $0.globalCount += 1 }))
        #expect(problems.map(\.code) == ["rebase.verification-failed"])
        #expect(problems.first?.message.contains("the event written") == true, "\(problems)")
    }

    @Test("a baseline that does not rebuild the folded state is refused (Spec/merge.md 13.7 step 5)", arguments: [false, true])
    func baselineWithAnotherState(binary: Bool) throws {
        // The file holds exactly the bytes written, the header is right: only its content is not S_C.
        let problems = try Self.refusal(
            RebaseFaults.Fault(changes: { changes in
                guard let index = changes.firstIndex(where: { !$0.propertyChanges.isEmpty }) else { return }
                changes[index].propertyChanges.removeLast()
            }), binary: binary)
        #expect(problems.map(\.code) == ["rebase.verification-failed"])
        #expect(problems.first?.message.contains("state it was written from") == true, "\(problems)")
    }
}
