import Crypto
import CryptoExtras
import Foundation

/// RNCryptor data format version 3, the encryption of Ensembles 2's encrypted cloud file system
/// (Spec/wrappers.md 3). The cipher, the key derivation and the MAC are swift-crypto's (AES-CBC
/// and PBKDF2 from CryptoExtras, HMAC-SHA256 from Crypto): nothing here is a cipher written by hand.
public enum RNCryptor {
    /// The format version byte.
    public static let version: UInt8 = 3
    /// PBKDF2-HMAC-SHA1 rounds of password mode.
    public static let rounds = 10_000
    static let saltLength = 8
    static let ivLength = 16
    static let blockLength = 16
    static let keyLength = 32
    static let hmacLength = 32

    /// The options byte: bit 0 says a password was used.
    package enum Mode: UInt8, Sendable {
        /// Two 32-byte keys given directly.
        case key = 0x00
        /// Keys derived from a password and two 8-byte salts.
        case password = 0x01

        /// Version, options, salts and IV.
        package var headerLength: Int { self == .password ? 2 + 2 * saltLength + ivLength : 2 + ivLength }
        /// The smallest file of this mode: the header, one cipher block (PKCS#7 always adds at
        /// least one byte) and the HMAC: 82 bytes for a password, 66 for keys.
        package var minimumLength: Int { headerLength + blockLength + hmacLength }
    }

    /// What decrypts a file: a password, or the two keys of key mode.
    public enum Credentials: Sendable, Hashable {
        case password([UInt8])
        case keys(encryption: [UInt8], hmac: [UInt8])

        /// A password as the RNCryptor libraries pass it to PBKDF2: its UTF-8 bytes.
        public static func password(_ text: String) -> Credentials { .password(Array(text.utf8)) }
    }

    /// PBKDF2-HMAC-SHA1, 10,000 rounds, 32 bytes: one key of password mode.
    public static func deriveKey(password: [UInt8], salt: some DataProtocol) -> [UInt8] {
        // Only unsupported parameters throw; these are fixed and supported.
        let key = try? KDF.Insecure.PBKDF2.deriveKey(
            from: password, salt: salt, using: .insecureSHA1, outputByteCount: keyLength, unsafeUncheckedRounds: rounds)
        return key.map { $0.withUnsafeBytes { Array($0) } } ?? []
    }

    /// The two keys for a file's salts; cached, because a folder is read more than once and
    /// each derivation costs 20,000 SHA-1 rounds.
    static func keys(for credentials: Credentials, encryptionSalt: ArraySlice<UInt8>, hmacSalt: ArraySlice<UInt8>) -> (encryption: [UInt8], hmac: [UInt8]) {
        switch credentials {
        case .keys(let encryption, let hmac):
            return (encryption, hmac)
        case .password(let password):
            return KeyCache.shared.keys(password: password, encryptionSalt: Array(encryptionSalt), hmacSalt: Array(hmacSalt))
        }
    }

    /// Where the HMAC of `bytes` starts when `bytes` is a file encrypted in password mode whose
    /// HMAC can be computed; nil for any other file (too short, ciphertext not of whole blocks,
    /// key mode, not RNCryptor v3): such a file cannot tell a right password from a wrong one
    /// (Spec/wrappers.md 5.5).
    package static func passwordHMACStart(_ bytes: [UInt8]) -> Int? {
        let mode = Mode.password
        guard bytes.count >= mode.minimumLength, bytes[0] == version, bytes[1] == mode.rawValue,
            (bytes.count - hmacLength - mode.headerLength) % blockLength == 0
        else { return nil }
        return bytes.count - hmacLength
    }

    /// Whether `password` opens `bytes`, a file of ``passwordHMACStart(_:)``: only its HMAC is
    /// compared, nothing is decrypted. Nil when the file cannot tell.
    package static func passwordOpens(_ bytes: [UInt8], password: [UInt8]) -> Bool? {
        guard let hmacStart = passwordHMACStart(bytes) else { return nil }
        let keys = KeyCache.shared.keys(password: password, encryptionSalt: Array(bytes[2..<10]), hmacSalt: Array(bytes[10..<18]))
        return HMAC<SHA256>.isValidAuthenticationCode(bytes[hmacStart...], authenticating: bytes[..<hmacStart], using: SymmetricKey(data: keys.hmac))
    }

    /// Decrypts one file. The HMAC over header and ciphertext is compared, in constant time,
    /// before anything is decrypted; a mismatch is `wrap.bad-password` (Spec/wrappers.md 3.2).
    /// Offsets are those of `bytes`.
    package static func decrypt(_ bytes: [UInt8], credentials: Credentials) throws(FormatError) -> [UInt8] {
        guard bytes.count >= 2, bytes[0] == version, let mode = Mode(rawValue: bytes[1]) else {
            throw FormatError(.fileKindUnknown, "not an RNCryptor v3 file: \(firstBytesDescription(bytes))", location: .init(offset: 0))
        }
        guard bytes.count >= mode.minimumLength else {
            throw FormatError(
                .wrapTruncated,
                "the encrypted file has \(bytes.count) bytes, fewer than the \(mode.minimumLength) of the smallest RNCryptor v3 file in \(mode == .password ? "password" : "key") mode",
                location: .init(offset: bytes.count))
        }
        let hmacStart = bytes.count - hmacLength
        let ciphertext = bytes[mode.headerLength..<hmacStart]
        guard ciphertext.count % blockLength == 0 else {
            throw FormatError(
                .wrapTruncated, "the ciphertext has \(ciphertext.count) bytes, not a whole number of 16-byte blocks: the file was cut short or extended",
                location: .init(offset: bytes.count))
        }
        switch (mode, credentials) {
        case (.password, .keys):
            throw FormatError(.wrapPasswordRequired, "this file was encrypted with a password, and only keys were given", location: .init(offset: 1))
        case (.key, .password):
            throw FormatError(
                .wrapBadPassword, "this file was encrypted with keys, not with a password (options byte 0x00); a password cannot decrypt it",
                location: .init(offset: 1))
        default: break
        }
        let ivStart = mode.headerLength - ivLength
        let keys =
            mode == .password
            ? keys(for: credentials, encryptionSalt: bytes[2..<10], hmacSalt: bytes[10..<18])
            : keys(for: credentials, encryptionSalt: [], hmacSalt: [])
        guard keys.encryption.count == keyLength, keys.hmac.count == keyLength else {
            throw FormatError(.wrapBadPassword, "the keys must be 32 bytes each", location: .init(offset: 0))
        }
        let authenticated = HMAC<SHA256>.isValidAuthenticationCode(
            bytes[hmacStart...], authenticating: bytes[..<hmacStart], using: SymmetricKey(data: keys.hmac))
        guard authenticated else {
            throw FormatError(
                .wrapBadPassword,
                "the HMAC at byte \(hmacStart) does not match: the password is wrong, or the file was changed after it was encrypted",
                location: .init(offset: hmacStart))
        }
        do {
            let iv = try AES._CBC.IV(ivBytes: bytes[ivStart..<mode.headerLength])
            return Array(try AES._CBC.decrypt(ciphertext, using: SymmetricKey(data: keys.encryption), iv: iv))
        } catch {
            throw FormatError(
                .wrapBadPadding, "the HMAC matches, but the decrypted bytes do not end in valid PKCS#7 padding: the writer is faulty",
                location: .init(offset: hmacStart - blockLength))
        }
    }

    /// Encrypts `plaintext` with a password, new random salts and IV from the system's secure
    /// random source (swift-crypto's `SymmetricKey`).
    public static func encrypt(_ plaintext: [UInt8], password: [UInt8]) -> [UInt8] {
        encrypt(plaintext, password: password, encryptionSalt: randomBytes(saltLength), hmacSalt: randomBytes(saltLength), iv: randomBytes(ivLength))
    }

    /// Encrypts with given salts and IV (known-answer tests); lengths other than 8, 8 and 16
    /// give an empty result.
    public static func encrypt(_ plaintext: [UInt8], password: [UInt8], encryptionSalt: [UInt8], hmacSalt: [UInt8], iv: [UInt8]) -> [UInt8] {
        guard encryptionSalt.count == saltLength, hmacSalt.count == saltLength else { return [] }
        let keys = KeyCache.shared.keys(password: password, encryptionSalt: encryptionSalt, hmacSalt: hmacSalt)
        return seal(plaintext, header: [version, Mode.password.rawValue] + encryptionSalt + hmacSalt + iv, iv: iv, keys: keys)
    }

    /// Key mode with given keys and IV; wrong lengths give an empty result.
    public static func encrypt(_ plaintext: [UInt8], encryptionKey: [UInt8], hmacKey: [UInt8], iv: [UInt8]) -> [UInt8] {
        guard encryptionKey.count == keyLength, hmacKey.count == keyLength else { return [] }
        return seal(plaintext, header: [version, Mode.key.rawValue] + iv, iv: iv, keys: (encryptionKey, hmacKey))
    }

    private static func seal(_ plaintext: [UInt8], header: [UInt8], iv: [UInt8], keys: (encryption: [UInt8], hmac: [UInt8])) -> [UInt8] {
        guard iv.count == ivLength, let cbcIV = try? AES._CBC.IV(ivBytes: iv),
            let ciphertext = try? AES._CBC.encrypt(plaintext, using: SymmetricKey(data: keys.encryption), iv: cbcIV)
        else { return [] }
        let message = header + Array(ciphertext)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: keys.hmac))
        return message + Array(mac)
    }

    /// Bytes from the system's secure random source.
    static func randomBytes(_ count: Int) -> [UInt8] {
        SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }
}

/// Derived keys by (password, salt): a file read twice (a folder's scan, then its replay)
/// derives its keys once. Bounded, so a hostile folder cannot grow it without end.
final class KeyCache: @unchecked Sendable {
    static let shared = KeyCache()
    private let lock = NSLock()
    private var keys: [[UInt8]: [UInt8]] = [:]
    private let capacity = 65_536

    func keys(password: [UInt8], encryptionSalt: [UInt8], hmacSalt: [UInt8]) -> (encryption: [UInt8], hmac: [UInt8]) {
        (key(password: password, salt: encryptionSalt), key(password: password, salt: hmacSalt))
    }

    private func key(password: [UInt8], salt: [UInt8]) -> [UInt8] {
        // Length-prefixed, so no two (password, salt) pairs share a cache key.
        let cacheKey = withUnsafeBytes(of: UInt64(password.count).littleEndian, Array.init) + password + salt
        lock.lock()
        let cached = keys[cacheKey]
        lock.unlock()
        if let cached { return cached }
        let derived = RNCryptor.deriveKey(password: password, salt: salt)
        lock.lock()
        if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
        keys[cacheKey] = derived
        lock.unlock()
        return derived
    }
}
