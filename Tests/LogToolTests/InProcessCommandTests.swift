import Foundation
import Testing
import LogToolCore

/// Commands run in process, with their exact output and exit status (the way
/// swift-argument-parser tests its commands). The expected texts are written out by hand from
/// the Spec: the finding-line grammar (merge.md 5.9), the fixtures' expected states, the usage
/// rules (README 6.1).
@Suite("Commands in process: exact output")
struct InProcessCommandTests {
    static let root = Run.packageRoot.path

    @Test("merge prints the state and one LF, nothing on standard error")
    func mergeState() throws {
        let run = LogTool.runCapturing(arguments: ["merge", "\(Self.root)/Fixtures/merge/baseline-covers/cloud/E"])
        #expect(run.status == 0)
        #expect(run.stderr == "")
        #expect(
            run.stdout
                == #"{"entities":{"Item":{"i1":{"count":1,"tags":["t1","t2"],"title":"base"},"i4":{"title":"four"}},"Tag":{"t1":{"name":"T1"},"t2":{"name":"T2"}}}}"#
                + "\n")
    }

    @Test("an integrity failure prints one finding line each on standard error, nothing on standard output")
    func mergeFindings() throws {
        let events = "\(Self.root)/Fixtures/merge/revision-gap-200/cloud/E/events"
        let run = LogTool.runCapturing(arguments: ["merge", "\(Self.root)/Fixtures/merge/revision-gap-200/cloud/E/"])
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(
            run.stderr == """
                merge.revision-gap (200) \(events)/3_A_3.cdeevent [store=A, first=2, last=2]: store A misses revisions 2...2
                merge.revision-gap (200) \(events)/7_C_5.cdeevent [store=C, first=3, last=4]: store C misses revisions 3...4
                merge.revision-gap (200) \(events)/8_C_8.cdeevent [store=C, first=6, last=7]: store C misses revisions 6...7

                """)
    }

    @Test("usage errors: exit 2, one message starting with the code, nothing on standard output")
    func usageErrors() throws {
        let existing = "\(Self.root)/Fixtures/merge/baseline-covers/case.json"
        let refused = LogTool.runCapturing(arguments: ["merge", "--out", existing, "\(Self.root)/Fixtures/merge/baseline-covers/cloud/E"])
        #expect(refused.status == 2)
        #expect(refused.stdout == "")
        #expect(refused.stderr == "merge.destination-exists: \(existing): already exists; give --force to replace it\n")
        let missing = LogTool.runCapturing(arguments: ["merge", "/nonexistent-input"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "folder.not-found /nonexistent-input: no such file or folder\n")
        let version = LogTool.runCapturing(arguments: ["merge", "--model-version", "X", "\(Self.root)/Fixtures/merge/baseline-covers/cloud/E"])
        #expect(version.status == 2)
        #expect(version.stderr.hasPrefix("Error: --model-version needs --model\n"))
    }

    @Test("--version")
    func version() {
        let run = LogTool.runCapturing(arguments: ["--version"])
        #expect(run.status == 0)
        #expect(run.stdout == "logtool 0.7.0 (Spec 0.7.0, conformance kit 1.4.0)\n")
        #expect(run.stderr == "")
    }
}
