import Foundation

/// The wrappers a writer puts around every file it writes (`convert --zip`, `--encrypt`;
/// Spec/wrappers.md 8): the content is zipped first, then encrypted, so a file with both is an
/// encrypted file holding a zip archive (layers `["encrypted", "zip"]`, outermost first). Not
/// `Hashable` or printable, so the password never reaches a log or a description.
public struct Wrapping: Sendable {
    /// The layers a reader removes, outermost first.
    package let layers: [WrapperLayer]
    private let password: [UInt8]

    /// No wrapper: files are written as they are.
    public static let plain = Wrapping(layers: [], password: [])

    private init(layers: [WrapperLayer], password: [UInt8]) {
        self.layers = layers
        self.password = password
    }

    /// The wrapping `zip` and `encryptWith` ask for; nil when encryption is asked with an empty
    /// password, which a writer never uses (Spec/wrappers.md 3.3).
    public init?(zip: Bool, encryptWith password: [UInt8]?) {
        if let password, password.isEmpty { return nil }
        var layers: [WrapperLayer] = []
        if password != nil { layers.append(.encrypted) }
        if zip { layers.append(.zip) }
        self.init(layers: layers, password: password ?? [])
    }

    public var isPlain: Bool { layers.isEmpty }

    /// The password source that reads what this wrapping wrote: the writing password itself, so
    /// a read-back never depends on where the reading password came from.
    public var readingPassword: PasswordSource? {
        guard layers.contains(.encrypted) else { return nil }
        let credentials = RNCryptor.Credentials.password(password)
        return PasswordSource { credentials }
    }

    /// `content` wrapped, innermost layer first: a zip archive of one entry named `name`
    /// (Spec/wrappers.md 4.3), then RNCryptor v3 in password mode with new random salts and IV
    /// (3.3). Nil when a layer cannot be written (a content of 4 GiB or more, which a zip
    /// archive without ZIP64 cannot hold, or a failure of the cipher).
    public func wrap(_ content: [UInt8], name: String) -> [UInt8]? {
        var bytes = content
        for layer in layers.reversed() {
            switch layer {
            case .zip:
                guard bytes.count < Int(UInt32.max) else { return nil }
                bytes = ZipArchive.write(name: name, content: bytes)
            case .encrypted:
                let sealed = RNCryptor.encrypt(bytes, password: password)
                guard !sealed.isEmpty else { return nil }
                bytes = sealed
            }
        }
        return bytes
    }
}

extension Unwrapper {
    /// `bytes` without exactly the layers `layers` (outermost first), or nil when the bytes are
    /// not wrapped that way as far as their first bytes tell. For data files, whose content
    /// cannot say whether it is a wrapper (Spec/wrappers.md 1): only the layers a folder's other
    /// files have are removed, never more. A layer that is there but cannot be removed (a wrong
    /// password, a damaged archive) throws its `wrap.*` error.
    package func remove(exactly layers: [WrapperLayer], from bytes: [UInt8]) throws(FormatError) -> [UInt8]? {
        var content = bytes
        var removed: [WrapperLayer] = []
        for layer in layers {
            guard ContentKind.detect(content) == layer.kind else { return nil }
            do throws(FormatError) {
                switch layer {
                case .zip:
                    content = try ZipArchive.readSingleEntry(content, maximumBytes: maximumBytes).content
                case .encrypted:
                    guard let credentials = password?.credentials() else {
                        throw FormatError(
                            .wrapPasswordRequired, "this file is encrypted; give its password with --password-file FILE or LOGTOOL_PASSWORD",
                            location: .init(offset: 0))
                    }
                    content = try RNCryptor.decrypt(content, credentials: credentials)
                }
            } catch {
                throw removed.isEmpty ? error : Self.inLayer(error, removed)
            }
            removed.append(layer)
        }
        return content
    }
}
