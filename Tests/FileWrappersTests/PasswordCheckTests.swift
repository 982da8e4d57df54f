import Foundation
import Testing
import JSONDocument
import FileWrappers

/// The password check of Spec/wrappers.md 5.5, through an injected prompt: how many answers are
/// asked for, which witnesses decide, and the one error of a wrong password. The witnesses are
/// encrypted here with fixed salts, so the keys are derived once for the whole suite.
@Suite("Password check: once per command, a second chance on a terminal")
struct PasswordCheckTests {
    static let right = Array("correct horse battery staple".utf8)
    static let salt: [UInt8] = Array(1...8)
    static let iv: [UInt8] = Array(1...16)

    /// An event's worth of bytes encrypted with `password` in password mode (Spec/wrappers.md 3.3).
    static func encrypted(_ password: [UInt8] = right) -> [UInt8] {
        RNCryptor.encrypt(Array(#"{"type":"merge"}"#.utf8), password: password, encryptionSalt: salt, hmacSalt: Array(salt.reversed()), iv: iv)
    }

    /// The answers a user types, one per prompt, and the prompts made.
    final class Typist: @unchecked Sendable {
        let lock = NSLock()
        var answers: [String?]
        var attempts: [Int] = []
        init(_ answers: [String?]) { self.answers = answers }
        func answer(_ attempt: Int) -> RNCryptor.Credentials? {
            lock.withLock {
                attempts.append(attempt)
                return answers.isEmpty ? nil : answers.removeFirst().map { .password($0) }
            }
        }
    }

    /// A supplier of witnesses named `a`, `b`, ...; `taken` counts the files asked for.
    final class Files: @unchecked Sendable {
        var files: [(file: String, bytes: [UInt8])]
        var taken = 0
        init(_ contents: [[UInt8]]) {
            files = contents.enumerated().map { (String(UnicodeScalar(UInt8(97 + $0.offset))), $0.element) }
        }
        func next() -> (file: String, bytes: [UInt8])? {
            guard taken < files.count else { return nil }
            taken += 1
            return files[taken - 1]
        }
    }

    @Test("a terminal gets three answers: two wrong ones, then the right one, and the check passes")
    func secondChance() throws {
        let typist = Typist(["wrong", "still wrong", "correct horse battery staple"])
        let source = PasswordSource(attempts: 3) { typist.answer($0) }
        let files = Files([Self.encrypted(), Self.encrypted()])
        try source.check(files.next)
        #expect(typist.attempts == [1, 2, 3])
        #expect(source.credentials() == .password(Self.right))
    }

    @Test("three wrong answers: one wrap.bad-password at the first witness's HMAC, and no fourth prompt")
    func threeWrong() throws {
        let typist = Typist(["a", "b", "c", "d"])
        let source = PasswordSource(attempts: 3) { typist.answer($0) }
        let witness = Self.encrypted()
        let files = Files([witness, Self.encrypted()])
        let error = #expect(throws: FormatError.self) { try source.check(files.next) }
        #expect(error?.code == .wrapBadPassword)
        #expect(error?.location.file == "a")
        // The HMAC is the last 32 bytes (Spec/wrappers.md 3.2, 7).
        #expect(error?.location.offset == witness.count - 32)
        #expect(error?.message.hasPrefix("wrong password") == true)
        #expect(typist.attempts == [1, 2, 3])
    }

    @Test("a password from a file or the environment is not asked again")
    func noRetry() throws {
        let typist = Typist(["wrong", "correct horse battery staple"])
        let source = PasswordSource { typist.answer(1) }
        let files = Files([Self.encrypted()])
        #expect(throws: FormatError.self) { try source.check(files.next) }
        #expect(typist.attempts == [1])
    }

    @Test("an empty answer after a wrong one gives up at once")
    func giveUp() throws {
        let typist = Typist(["wrong", nil, "correct horse battery staple"])
        let source = PasswordSource(attempts: 3) { typist.answer($0) }
        #expect(throws: FormatError.self) { try source.check(Files([Self.encrypted()]).next) }
        #expect(typist.attempts == [1, 2])
    }

    @Test("the check is made once: a second command step gets the same verdict without a file or a prompt")
    func once() throws {
        let typist = Typist(["wrong"])
        let source = PasswordSource(attempts: 1) { typist.answer($0) }
        let first = #expect(throws: FormatError.self) { try source.check(Files([Self.encrypted()]).next) }
        let files = Files([Self.encrypted()])
        let second = #expect(throws: FormatError.self) { try source.check(files.next) }
        #expect(first == second)
        #expect(files.taken == 0)
        #expect(typist.attempts == [1])
    }

    @Test("a damaged first witness does not make the right password wrong: the second one decides")
    func damagedFirstWitness() throws {
        var damaged = Self.encrypted()
        damaged[damaged.count - 1] ^= 0x01
        try PasswordSource(password: "correct horse battery staple").check(Files([damaged, Self.encrypted()]).next)
        // Both failing is a wrong password, named at the first.
        let error = #expect(throws: FormatError.self) {
            try PasswordSource(password: "wrong").check(Files([damaged, Self.encrypted()]).next)
        }
        #expect(error?.location.file == "a")
    }

    @Test("files that cannot tell are passed over; with none there is nothing to check and nobody is asked")
    func witnesses() throws {
        let plain = Array(#"{"type":"merge"}"#.utf8)
        let truncated = Array(Self.encrypted().dropLast(3))
        var keyMode = Self.encrypted()
        keyMode[1] = 0x00
        let typist = Typist(["wrong"])
        let files = Files([plain, truncated, keyMode])
        try PasswordSource(attempts: 3) { typist.answer($0) }.check(files.next)
        #expect(typist.attempts.isEmpty)
        #expect(files.taken == 3)
        // After them, a witness decides, and it is the one named.
        let error = #expect(throws: FormatError.self) {
            try PasswordSource(password: "wrong").check(Files([plain, truncated, keyMode, Self.encrypted()]).next)
        }
        #expect(error?.location.file == "d")
    }

    @Test("the right password at once reads only the first witness")
    func rightAtOnce() throws {
        let files = Files([Self.encrypted(), Self.encrypted(), Self.encrypted()])
        try PasswordSource(password: "correct horse battery staple").check(files.next)
        #expect(files.taken == 1)
    }
}
