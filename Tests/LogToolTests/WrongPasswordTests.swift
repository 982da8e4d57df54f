import Foundation
import Testing
import JSONDocument
import FileWrappers
import LogToolCore

/// A wrong password is one error (Spec/wrappers.md 5.5): checked once against the first encrypted
/// file, exit 2, never one line per file, and in verify never a diagnostic per file nor advice to
/// remove files. The folder is a generated history of about 2,000 events, every file encrypted
/// here with fixed salts, so that the key is derived once and the suite stays fast.
@Suite("A wrong password is said once")
struct WrongPasswordTests {
    static let password = "correct horse battery staple"

    /// A scratch copy of a generated folder (`logtool generate`) whose `stores/`, `events/` and
    /// `baselines/` files are all encrypted with ``password``; its ensemble folder and its event
    /// file names.
    static func encryptedFolder() throws -> (scratch: URL, ensemble: URL, events: [String]) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("wrong-password-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        let generated = try WrappedFolderTests.run([
            "generate", scratch.appendingPathComponent("g").path, "--stores", "2", "--objects", "40", "--changes", "2000",
            "--changes-per-event", "1", "--concurrency", "0",
        ])
        #expect(generated.status == 0, "\(generated.stderr)")
        let ensemble = scratch.appendingPathComponent("g/cloud/Generated")
        let salt: [UInt8] = Array(11...18)
        var events: [String] = []
        for folder in ["stores", "events", "baselines"] {
            let url = ensemble.appendingPathComponent(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] {
                let file = url.appendingPathComponent(name)
                let plain = [UInt8](try Data(contentsOf: file))
                let sealed = RNCryptor.encrypt(plain, password: Array(password.utf8), encryptionSalt: salt, hmacSalt: Array(salt.reversed()), iv: Array(1...16))
                try Data(sealed).write(to: file)
                if folder == "events" { events.append(name) }
            }
        }
        return (scratch, ensemble, events)
    }

    /// One generated folder serves the three checks below: generating it is most of the time.
    @Test("~2,000 encrypted events with a wrong password: merge, verify and every other command say it in one line, exit 2")
    func wrongPassword() throws {
        let (scratch, ensemble, events) = try Self.encryptedFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try merge(ensemble, events: events)
        try verify(ensemble)
        try everyCommand(ensemble, scratch: scratch)
    }

    /// merge: one line naming the first event file by byte order.
    func merge(_ ensemble: URL, events: [String]) throws {
        #expect(events.count >= 1_900)
        // The folder has no baselines/, so the first witness is the first name of events/ by bytes
        // (`1000_...` before `100_...` before `10_...`): sorted here by bytes, independently.
        #expect(!FileManager.default.fileExists(atPath: ensemble.appendingPathComponent("baselines").path))
        let first = events.min { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) } ?? ""
        let wrong = try WrappedFolderTests.run(["merge", ensemble.path], environment: ["LOGTOOL_PASSWORD": "wrong"])
        #expect(wrong.status == 2)
        #expect(wrong.stdout.isEmpty)
        let lines = wrong.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1, "\(wrong.stderr.prefix(2000))")
        #expect(lines.first?.hasPrefix("wrap.bad-password") == true)
        #expect(lines.first?.contains("events/\(first)") == true, "\(wrong.stderr)")
        #expect(lines.first?.contains("wrong password") == true)
        // The right password reads the same folder.
        let right = try WrappedFolderTests.run(["merge", ensemble.path], environment: ["LOGTOOL_PASSWORD": Self.password])
        #expect(right.status == 0, "\(right.stderr.prefix(2000))")
    }

    /// verify: one error; no unreadable-file, no advice to remove, no rebase line.
    func verify(_ ensemble: URL) throws {
        let text = try WrappedFolderTests.run(["verify", ensemble.path], environment: ["LOGTOOL_PASSWORD": "wrong"])
        #expect(text.status == 2)
        #expect(text.stdout.isEmpty)
        #expect(text.stderr.split(separator: "\n").count == 1, "\(text.stderr.prefix(2000))")
        #expect(text.stderr.hasPrefix("wrap.bad-password"))
        #expect(text.stderr.contains("wrong password"))
        for absent in ["unreadable-file", "remove", "rebase"] { #expect(!text.stderr.contains(absent)) }
        let json = try WrappedFolderTests.run(["verify", "--json", ensemble.path], environment: ["LOGTOOL_PASSWORD": "wrong"])
        #expect(json.status == 2)
        let document = try JSONParser.parse(Array(json.stdout.utf8))
        let errors = document[JSONPointer(["errors"])]?.arrayValue ?? []
        #expect(errors.count == 1)
        #expect(errors.first?[JSONPointer(["code"])] == .string("wrap.bad-password"))
        #expect(document[JSONPointer(["ensembles"])] == nil)
    }

    /// Every command that reads the folder stops at the check with the same one line.
    func everyCommand(_ ensemble: URL, scratch: URL) throws {
        let path = ensemble.path
        let out = scratch.appendingPathComponent("out").path
        let commands: [[String]] = [
            ["inspect", path], ["merge", "--json", path], ["merge", "--as-store", "x", path], ["history", "--entity", "Note", "--id", "n1", path],
            ["rebase", path, "--out", out], ["repair", path], ["timeline", path], ["convert", path, out],
        ]
        var lines: Set<String> = []
        for arguments in commands {
            let run = try WrappedFolderTests.run(arguments, environment: ["LOGTOOL_PASSWORD": "wrong"])
            #expect(run.status == 2, "\(arguments): \(run.stderr.prefix(500))")
            let shown = (run.stderr + run.stdout).split(separator: "\n")
            #expect(shown.count == 1, "\(arguments): \(run.stderr.prefix(500))\(run.stdout.prefix(500))")
            #expect(shown.first?.contains("wrap.bad-password") == true, "\(arguments)")
            #expect(shown.first?.contains("wrong password") == true, "\(arguments)")
            // convert writes its errors in a shape of its own (`logtool: CODE: ...`).
            if run.stdout.isEmpty && arguments[0] != "convert" { lines.insert(run.stderr) }
            #expect(!FileManager.default.fileExists(atPath: out), "\(arguments) wrote \(out)")
        }
        #expect(lines.count == 1, "\(lines)")
    }

    @Test("a right password with the first witness damaged is not called wrong: that file alone is reported")
    func damagedFirstFile() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("damaged-witness-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/wrappers/folders/healthy-encrypted/cloud"), to: scratch)
        // The first witness by Spec/wrappers.md 5.5's order: E has no baselines/, and of its
        // events/ `0_ALPHA-STORE_0.cdeevent` comes first by bytes.
        let file = scratch.appendingPathComponent("E/events/0_ALPHA-STORE_0.cdeevent")
        var bytes = [UInt8](try Data(contentsOf: file))
        bytes[bytes.count - 1] ^= 0x01
        try Data(bytes).write(to: file)
        let verify = try WrappedFolderTests.run(["verify", "--json", scratch.path], environment: ["LOGTOOL_PASSWORD": Self.password])
        #expect(verify.status == 1, "\(verify.stderr)")
        let diagnostics = try WrappedFolderTests.diagnostics(verify.stdout)
        let unreadable = diagnostics.filter { $0[JSONPointer(["details", "cause"])] == .string("wrap.bad-password") }
        #expect(unreadable.count == 1)
        #expect(unreadable.first?[JSONPointer(["files", "0"])] == .string("events/0_ALPHA-STORE_0.cdeevent"))
        #expect(unreadable.first?[JSONPointer(["details", "offset"])] == JSONValue(Int64(bytes.count - 32)))
    }

    @Test("the terminal prompt of logtool allows three answers and says the second time that the password was wrong")
    func prompt() throws {
        final class Asked: @unchecked Sendable {
            let lock = NSLock()
            var questions: [String] = []
        }
        let asked = Asked()
        let source = PasswordOption.promptSource { question in
            asked.lock.withLock { asked.questions.append(question) }
            return Array("wrong".utf8)
        }
        let witness = RNCryptor.encrypt(Array("{}".utf8), password: Array(Self.password.utf8))
        var given = false
        #expect(throws: FormatError.self) {
            try source.check {
                defer { given = true }
                return given ? nil : ("events/1_A_1.cdeevent", witness)
            }
        }
        #expect(asked.questions.count == 3)
        #expect(asked.questions.first == "Password of the encrypted folder: ")
        #expect(asked.questions.dropFirst().allSatisfy { $0.hasPrefix("Wrong password") })
    }
}
