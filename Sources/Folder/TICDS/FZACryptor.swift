import Crypto
import CryptoExtras
import FileWrappers
import Foundation
import JSONDocument

extension FormatError.Code {
    /// An FZACryptor file shorter than the smallest one (112 bytes) or whose ciphertext is not a
    /// whole number of AES blocks (Spec/ticds.md 5.3).
    public static let ticdsTruncated = Self("ticds.truncated")
    /// The HMAC of an FZACryptor file does not match although the password opens
    /// `test.ticdsync`: the file was changed after it was encrypted (Spec/ticds.md 5.3).
    public static let ticdsBadHMAC = Self("ticds.bad-hmac")
    /// The password does not open `Encryption/test.ticdsync` (Spec/ticds.md 5.4).
    public static let ticdsWrongPassword = Self("ticds.wrong-password")
    /// The folder is encrypted and no password was given (Spec/ticds.md 5.4).
    public static let ticdsPasswordRequired = Self("ticds.password-required")
    /// The HMAC matches but the plain bytes do not end in valid PKCS#7 padding (Spec/ticds.md 5.3).
    public static let ticdsBadPadding = Self("ticds.bad-padding")
}

/// TICoreDataSync's file encryption, FZACryptor (Spec/ticds.md 5): one sync key derived from the
/// password and the folder's salt; each file carries its own random key and IV, encrypted under
/// the sync key, and an HMAC-SHA256 under the sync key over everything before it. The ciphers
/// and the MAC are swift-crypto's; nothing here is a cipher written by hand.
package enum FZACryptor {
    package static let saltLength = 16
    static let blockLength = 16
    static let keyLength = 32
    static let hmacLength = 32
    /// SHA-256 rounds of the key derivation: one over password and salt, then 7,499 over the digest.
    package static let rounds = 7_500
    /// IV, encrypted file key and IV, one cipher block (PKCS#7 always adds one), HMAC.
    package static let minimumLength = blockLength + keyLength + blockLength + blockLength + hmacLength
    static let headerLength = blockLength + keyLength + blockLength

    /// The sync key of `password` and `salt` (Spec/ticds.md 5.1): SHA-256 of the password's
    /// UTF-16LE code units followed by the salt, then SHA-256 of the digest, 7,500 digests in all.
    package static func syncKey(password: String, salt: [UInt8]) -> [UInt8] {
        var input: [UInt8] = []
        for unit in password.utf16 { input += [UInt8(truncatingIfNeeded: unit), UInt8(truncatingIfNeeded: unit >> 8)] }
        input += salt
        // Digest to digest without an array between rounds: the copies were most of the time.
        var digest = SHA256.hash(data: input)
        for _ in 1..<rounds {
            digest = digest.withUnsafeBytes { bytes in
                var hasher = SHA256()
                hasher.update(bufferPointer: bytes)
                return hasher.finalize()
            }
        }
        return Array(digest)
    }

    /// The sync key of the credentials a password source gives: a password (its UTF-8 bytes, as
    /// the Ensembles 2 wrappers take it) with the salt, or a 32-byte key given directly as the
    /// encryption key of key mode. Nil when they cannot give one.
    package static func syncKey(_ credentials: RNCryptor.Credentials, salt: [UInt8]) -> [UInt8]? {
        switch credentials {
        case .password(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
            return syncKey(password: text, salt: salt)
        case .keys(let encryption, _):
            return encryption.count == keyLength ? encryption : nil
        }
    }

    /// Whether `bytes` has the length of an FZACryptor file: at least ``minimumLength``, and the
    /// content ciphertext a whole number of blocks.
    package static func hasFileLength(_ bytes: [UInt8]) -> Bool {
        bytes.count >= minimumLength && (bytes.count - headerLength - hmacLength) % blockLength == 0
    }

    /// Whether the HMAC of `bytes` matches under `key`, compared in constant time by swift-crypto;
    /// nil when the file is too short to carry one.
    package static func authenticates(_ bytes: [UInt8], key: [UInt8]) -> Bool? {
        guard hasFileLength(bytes) else { return nil }
        let hmacStart = bytes.count - hmacLength
        return HMAC<SHA256>.isValidAuthenticationCode(bytes[hmacStart...], authenticating: bytes[..<hmacStart], using: SymmetricKey(data: key))
    }

    /// Decrypts one file under the sync `key` (Spec/ticds.md 5.2, 5.3). The length is checked
    /// first (`ticds.truncated`), then the HMAC, in constant time, before any byte is decrypted
    /// (`ticds.bad-hmac`); only then the file key and the content. Offsets are those of `bytes`.
    package static func decrypt(_ bytes: [UInt8], key: [UInt8]) throws(FormatError) -> [UInt8] {
        guard hasFileLength(bytes) else {
            throw FormatError(
                .ticdsTruncated,
                bytes.count < minimumLength
                    ? "the encrypted file has \(bytes.count) bytes, fewer than the \(minimumLength) of the smallest FZACryptor file"
                    : "the ciphertext has \(bytes.count - headerLength - hmacLength) bytes, not a whole number of 16-byte blocks: the file was cut short or extended",
                location: .init(offset: bytes.count))
        }
        let hmacStart = bytes.count - hmacLength
        guard authenticates(bytes, key: key) == true else {
            throw FormatError(
                .ticdsBadHMAC, "the HMAC at byte \(hmacStart) does not match: the file was changed after it was encrypted, or the password is wrong",
                location: .init(offset: hmacStart))
        }
        do {
            let wrapped = try AES._CBC.decrypt(
                bytes[blockLength..<headerLength], using: SymmetricKey(data: key), iv: try AES._CBC.IV(ivBytes: bytes[0..<blockLength]), noPadding: true)
            let fileKey = Array(wrapped.prefix(keyLength))
            let fileIV = Array(wrapped.dropFirst(keyLength).prefix(blockLength))
            return Array(
                try AES._CBC.decrypt(bytes[headerLength..<hmacStart], using: SymmetricKey(data: fileKey), iv: try AES._CBC.IV(ivBytes: fileIV)))
        } catch {
            throw FormatError(
                .ticdsBadPadding, "the HMAC matches, but the decrypted bytes do not end in valid PKCS#7 padding: the writer is faulty",
                location: .init(offset: hmacStart - blockLength))
        }
    }

    /// Encrypts `plaintext` under the sync `key` with the given top-level IV, file key and file
    /// IV (tests build files with known key material; the toolkit never writes into a TICDS folder).
    package static func encrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], fileKey: [UInt8], fileIV: [UInt8]) -> [UInt8] {
        guard key.count == keyLength, iv.count == blockLength, fileKey.count == keyLength, fileIV.count == blockLength,
            let outerIV = try? AES._CBC.IV(ivBytes: iv), let innerIV = try? AES._CBC.IV(ivBytes: fileIV),
            let wrapped = try? AES._CBC.encrypt(fileKey + fileIV, using: SymmetricKey(data: key), iv: outerIV, noPadding: true),
            let content = try? AES._CBC.encrypt(plaintext, using: SymmetricKey(data: fileKey), iv: innerIV)
        else { return [] }
        let message = iv + Array(wrapped) + Array(content)
        return message + hmac(message, key: key)
    }

    /// The HMAC-SHA256 of `message` under the sync `key`, as a file ends in it (tests and the
    /// fuzz target sign files with it).
    package static func hmac(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}

extension FZACryptor {
    /// One AES-256-CBC encryption without padding (tests build damaged files with it); empty
    /// when the lengths are wrong.
    package static func encryptNoPadding(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8] {
        guard let cbcIV = try? AES._CBC.IV(ivBytes: iv), plaintext.count % blockLength == 0,
            let sealed = try? AES._CBC.encrypt(plaintext, using: SymmetricKey(data: key), iv: cbcIV, noPadding: true)
        else { return [] }
        return Array(sealed)
    }
}
