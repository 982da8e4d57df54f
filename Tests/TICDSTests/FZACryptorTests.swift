import Crypto
import Foundation
import JSONDocument
import Testing

@testable import TICDS

/// FZACryptor (Spec/ticds.md 5) against a file built outside the toolkit: the key by Python's
/// hashlib, the two ciphertexts by `openssl enc`, the HMAC by Python's hmac (password "secret",
/// salt 00..0F, IV A0..AF, file key 40..5F, file IV 80..8F, plain text "hello TICDS").
@Suite("FZACryptor")
struct FZACryptorTests {
    static let salt = Array(UInt8(0)..<16)
    static let key = hex("74583807a044dc2f61e7d68432c583f6324cca22d681975da410fedf21236a72")
    static let file = hex(
        "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf46a79e40db479d7006585989db9a3b005c93dcf70ef6bdb353c5ee4a31f10bfb2dd50d294d28ead29dbaa1684cca57233b6b341a5096496727404dd400e87e3bb293e45ccb8191becd1d6b5219a0da717865069af913a55709117b3cc05d316a"
    )
    static let iv = (0..<16).map { UInt8(0xA0 + $0) }
    static let fileKey = (0..<32).map { UInt8(0x40 + $0) }
    static let fileIV = (0..<16).map { UInt8(0x80 + $0) }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    @Test("the sync key is 7,500 SHA-256 digests of the UTF-16LE password and the salt")
    func syncKey() {
        #expect(FZACryptor.syncKey(password: "secret", salt: Self.salt) == Self.key)
        // Through a password source's credentials (UTF-8 bytes read as text).
        #expect(FZACryptor.syncKey(.password("secret"), salt: Self.salt) == Self.key)
        #expect(FZACryptor.syncKey(password: "Secret", salt: Self.salt) != Self.key)
    }

    @Test("a file openssl built decrypts, and the toolkit's own encryption gives the same bytes")
    func knownAnswer() throws {
        #expect(try FZACryptor.decrypt(Self.file, key: Self.key) == Array("hello TICDS".utf8))
        #expect(FZACryptor.encrypt(Array("hello TICDS".utf8), key: Self.key, iv: Self.iv, fileKey: Self.fileKey, fileIV: Self.fileIV) == Self.file)
    }

    static func code(_ body: () throws(FormatError) -> [UInt8]) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    @Test("a short file, or one not in whole blocks, is ticds.truncated")
    func truncated() {
        #expect(Self.code { () throws(FormatError) in try FZACryptor.decrypt(Array(Self.file.prefix(111)), key: Self.key) } == "ticds.truncated")
        #expect(Self.code { () throws(FormatError) in try FZACryptor.decrypt(Array(Self.file.dropLast()), key: Self.key) } == "ticds.truncated")
        #expect(Self.code { () throws(FormatError) in try FZACryptor.decrypt(Self.file + [0], key: Self.key) } == "ticds.truncated")
        #expect(Self.code { () throws(FormatError) in try FZACryptor.decrypt([], key: Self.key) } == "ticds.truncated")
    }

    @Test("a changed byte anywhere, the HMAC's last one included, or another key is ticds.bad-hmac")
    func badHMAC() {
        for position in [0, 20, 70, Self.file.count - 33, Self.file.count - 1] {
            var changed = Self.file
            changed[position] ^= 0x01
            #expect(Self.code { () throws(FormatError) in try FZACryptor.decrypt(changed, key: Self.key) } == "ticds.bad-hmac", "byte \(position)")
        }
        let other = FZACryptor.syncKey(password: "wrong", salt: Self.salt)
        #expect(Self.code { () throws(FormatError) in try FZACryptor.decrypt(Self.file, key: other) } == "ticds.bad-hmac")
    }

    /// A file whose content's padding is invalid (a last plain byte of 0) with a matching HMAC.
    static func badPaddingFile() -> [UInt8] {
        let good = FZACryptor.encrypt(Array(repeating: 0x41, count: 16), key: key, iv: iv, fileKey: fileKey, fileIV: fileIV)
        // Replace the content by one block encrypted without padding, its last byte 0.
        let block = FZACryptor.encryptNoPadding(Array(repeating: 0x00, count: 16), key: fileKey, iv: fileIV)
        let message = Array(good.prefix(64)) + block
        return message + Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    @Test("an authentic file with invalid padding is ticds.bad-padding; with its HMAC changed, bad-hmac: the HMAC comes first")
    func hmacBeforeDecryption() {
        let file = Self.badPaddingFile()
        #expect(Self.code { () throws(FormatError) in try FZACryptor.decrypt(file, key: Self.key) } == "ticds.bad-padding")
        var tampered = file
        tampered[tampered.count - 1] ^= 0x80
        #expect(Self.code { () throws(FormatError) in try FZACryptor.decrypt(tampered, key: Self.key) } == "ticds.bad-hmac")
    }
}
