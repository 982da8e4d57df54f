import Foundation
import Testing
import FileWrappers

/// The official RNCryptor v3 test vectors (Fixtures/external/rncryptor-v3/, copied byte for byte
/// from RNCryptor-Spec): known answers nobody in this project computed (Spec/wrappers.md 3).
@Suite("RNCryptor v3: the official vectors")
struct RNCryptorVectorTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/external/rncryptor-v3")

    /// The vector files' blocks: `name: value` lines, blocks separated by blank lines, `#` comments.
    static func vectors(_ file: String) -> [[String: String]] {
        guard let text = try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8) else { return [] }
        var blocks: [[String: String]] = []
        var current: [String: String] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") {
                if !current.isEmpty { blocks.append(current) }
                current = [:]
                continue
            }
            guard let colon = trimmed.firstIndex(of: ":") else { continue }
            let key = String(trimmed[..<colon])
            current[key] = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if !current.isEmpty { blocks.append(current) }
        return blocks.filter { $0["version"] == "3" }
    }

    static func hex(_ text: String?) -> [UInt8] {
        let digits = Array((text ?? "").filter(\.isHexDigit).utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0...($0 + 1)], as: UTF8.self), radix: 16) }
    }

    @Test("the three vector files are there, with 6 key derivations, 4 key-mode and 6 password-mode encryptions")
    func counts() {
        #expect(Self.vectors("kdf").count == 6)
        #expect(Self.vectors("key").count == 4)
        #expect(Self.vectors("password").count == 6)
    }

    @Test("key derivation: PBKDF2-HMAC-SHA1, 10,000 rounds, 32 bytes", arguments: vectors("kdf"))
    func kdf(vector: [String: String]) {
        let key = RNCryptor.deriveKey(password: Array((vector["password"] ?? "").utf8), salt: Self.hex(vector["salt_hex"]))
        #expect(key == Self.hex(vector["key_hex"]), "\(vector["title"] ?? "")")
    }

    @Test("key mode: encrypting gives the vector's bytes, decrypting gives the plaintext", arguments: vectors("key"))
    func keyMode(vector: [String: String]) throws {
        let encryption = Self.hex(vector["enc_key_hex"]), hmacKey = Self.hex(vector["hmac_key_hex"])
        let plaintext = Self.hex(vector["plaintext_hex"]), ciphertext = Self.hex(vector["ciphertext_hex"])
        #expect(RNCryptor.encrypt(plaintext, encryptionKey: encryption, hmacKey: hmacKey, iv: Self.hex(vector["iv_hex"])) == ciphertext)
        #expect(try RNCryptor.decrypt(ciphertext, credentials: .keys(encryption: encryption, hmac: hmacKey)) == plaintext)
        #expect(ContentKind.detect(ciphertext) == .encrypted)
    }

    @Test("password mode: encrypting gives the vector's bytes, decrypting gives the plaintext", arguments: vectors("password"))
    func passwordMode(vector: [String: String]) throws {
        let password = Array((vector["password"] ?? "").utf8)
        let plaintext = Self.hex(vector["plaintext_hex"]), ciphertext = Self.hex(vector["ciphertext_hex"])
        let encrypted = RNCryptor.encrypt(
            plaintext, password: password, encryptionSalt: Self.hex(vector["enc_salt_hex"]), hmacSalt: Self.hex(vector["hmac_salt_hex"]),
            iv: Self.hex(vector["iv_hex"]))
        #expect(encrypted == ciphertext, "\(vector["title"] ?? "")")
        #expect(try RNCryptor.decrypt(ciphertext, credentials: .password(password)) == plaintext)
        #expect(ContentKind.detect(ciphertext) == .encrypted)
        // The same file with any other password: one clear error at the HMAC, never garbage.
        #expect(throws: FormatError.self) { try RNCryptor.decrypt(ciphertext, credentials: .password(password + [0x21])) }
        do {
            _ = try RNCryptor.decrypt(ciphertext, credentials: .password(password + [0x21]))
        } catch {
            #expect(error.code == .wrapBadPassword)
            #expect(error.location.offset == ciphertext.count - 32)
        }
    }

    @Test("random salts and IV: two encryptions differ and both decrypt")
    func randomEncryption() throws {
        let plaintext = Array("{\"a\":1}".utf8)
        let first = RNCryptor.encrypt(plaintext, password: Array("pw".utf8))
        let second = RNCryptor.encrypt(plaintext, password: Array("pw".utf8))
        #expect(first != second)
        #expect(first.count == 82)
        #expect(try RNCryptor.decrypt(first, credentials: .password("pw")) == plaintext)
        #expect(try RNCryptor.decrypt(second, credentials: .password("pw")) == plaintext)
    }

    @Test("key-mode file read with a password, and password-mode file with keys: refused at the options byte")
    func modeMismatch() {
        let keyFile = RNCryptor.encrypt(
            [1, 2, 3], encryptionKey: Array(repeating: 1, count: 32), hmacKey: Array(repeating: 2, count: 32), iv: Array(repeating: 0, count: 16))
        let passwordFile = RNCryptor.encrypt([1, 2, 3], password: Array("pw".utf8))
        for (file, credentials, code) in [
            (keyFile, RNCryptor.Credentials.password("pw"), FormatError.Code.wrapBadPassword),
            (passwordFile, .keys(encryption: Array(repeating: 1, count: 32), hmac: Array(repeating: 2, count: 32)), .wrapPasswordRequired),
        ] {
            do {
                _ = try RNCryptor.decrypt(file, credentials: credentials)
                Issue.record("decrypted")
            } catch {
                #expect(error.code == code)
                #expect(error.location.offset == 1)
            }
        }
    }
}
