import Foundation
import Testing
import JSONDocument
import LogToolCore

/// `verify --severity`, `--accept` and `--write-accept` (Spec/verify.md 5.1), beyond the golden
/// cases of Fixtures/verify that pin each on one folder.
@Suite("verify: chosen severities and accepted findings")
struct FindingPolicyTests {
    static let fixtures = Run.packageRoot.appendingPathComponent("Fixtures/verify")

    static func scratchCopy(of caseName: String) throws -> URL {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("\(caseName)/cloud"), to: scratch.appendingPathComponent("cloud"))
        return scratch
    }

    static func verify(_ arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let run = LogTool.runCapturing(arguments: ["verify"] + arguments)
        return (run.status, run.stdout, run.stderr)
    }

    @Test("a list written by --write-accept accepts what it lists, until one of the listed files changes")
    func roundTrip() throws {
        let scratch = try Self.scratchCopy(of: "name-mismatch")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cloud = scratch.appendingPathComponent("cloud").path, list = scratch.appendingPathComponent("known.json").path
        let first = Self.verify(["--write-accept", list, cloud])
        #expect(first.status == 1)
        let written = try JSONParser.parse(try Data(contentsOf: URL(fileURLWithPath: list)))
        #expect(written[JSONPointer(["accepted", "0", "code"])] == .string("verify.name-mismatch"))
        #expect(Self.verify(["--accept", list, cloud]).status == 0)
        // The file the finding names changes: the finding counts again.
        let event = scratch.appendingPathComponent("cloud/E/events/2_ALPHA-STORE_1.cdeevent")
        try (try Data(contentsOf: event) + Data(" ".utf8)).write(to: event)
        let after = Self.verify(["--json", "--accept", list, cloud])
        #expect(after.status == 1)
        let document = try JSONParser.parse(after.stdout)
        #expect(document[JSONPointer(["summary", "accepted"])] == JSONValue(Int64(0)))
        #expect(document[JSONPointer(["ensembles", "0", "diagnostics", "0", "accepted"])] == nil)
    }

    @Test("a code that makes a merge fail is never lowered, accepted or written into a list")
    func mergeFailingCodes() throws {
        let scratch = try Self.scratchCopy(of: "revision-gap")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cloud = scratch.appendingPathComponent("cloud").path, list = scratch.appendingPathComponent("known.json").path
        for level in ["warning", "info", "ignore"] {
            let run = Self.verify(["--severity", "verify.revision-gap=\(level)", cloud])
            #expect(run.status == 2 && run.stderr.contains("verify.invalid-severity"), "\(level): \(run.stderr)")
        }
        #expect(Self.verify(["--severity", "verify.incomplete-multipart=error", cloud]).status == 1)
        #expect(Self.verify(["--severity", "verify.incomplete-multipart=info", cloud]).status == 2)
        #expect(Self.verify(["--write-accept", list, cloud]).status == 1)
        let written = try JSONParser.parse(try Data(contentsOf: URL(fileURLWithPath: list)))
        #expect(written[JSONPointer(["accepted"])] == .array([]))
        let forged = #"{"acceptVersion":1,"accepted":[{"ensemble":"E","code":"verify.revision-gap","files":["x"],"details":{},"sha256":{"x":null}}]}"#
        try Data(forged.utf8).write(to: URL(fileURLWithPath: list))
        let run = Self.verify(["--accept", list, cloud])
        #expect(run.status == 2 && run.stderr.contains("verify.invalid-accept-list") && run.stderr.contains("/accepted/0/code"), "\(run.stderr)")
    }

    @Test(
        "bad values are usage errors that name the fault",
        arguments: [
            (["--severity", "verify.nonsense=info"], "verify.invalid-severity"),
            (["--severity", "verify.debris"], "verify.invalid-severity"),
            (["--severity", "verify.debris=info", "--severity", "verify.debris=error"], "verify.invalid-severity"),
            (["--accept", "/nonexistent/known.json"], "verify.invalid-accept-list"),
        ])
    func usage(arguments: [String], code: String) throws {
        let run = Self.verify(arguments + [Self.fixtures.appendingPathComponent("debris/cloud").path])
        #expect(run.status == 2 && run.stderr.hasPrefix(code), "\(run.stderr)")
    }

    @Test("an accept list is checked member by member, with the pointer of the first fault")
    func acceptListShape() throws {
        let scratch = try Self.scratchCopy(of: "debris")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cloud = scratch.appendingPathComponent("cloud").path, list = scratch.appendingPathComponent("known.json")
        let cases: [(String, String)] = [
            (#"[]"#, "[pointer=\"\"]"),
            (#"{"acceptVersion":2,"accepted":[]}"#, "/acceptVersion"),
            (#"{"acceptVersion":1,"accepted":[],"extra":1}"#, "[pointer=\"\"]"),
            (#"{"acceptVersion":1,"accepted":[{"ensemble":"E","code":"verify.debris","files":["a"],"details":{},"sha256":{"b":null}}]}"#, "/accepted/0/sha256"),
            (
                #"{"acceptVersion":1,"accepted":[{"ensemble":"E","code":"verify.debris","files":["a"],"details":{},"sha256":{"a":"ABC"}}]}"#,
                "/accepted/0/sha256/a"
            ),
            (#"{"acceptVersion":1,"accepted":[{"ensemble":"E","code":"verify.debris","files":[],"details":{},"sha256":{}}]}"#, "/accepted/0/files"),
        ]
        for (text, pointer) in cases {
            try Data(text.utf8).write(to: list)
            let run = Self.verify(["--accept", list.path, cloud])
            #expect(run.status == 2 && run.stderr.contains("verify.invalid-accept-list") && run.stderr.contains(pointer), "\(text): \(run.stderr)")
        }
    }
}
