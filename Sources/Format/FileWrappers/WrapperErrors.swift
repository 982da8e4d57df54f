@_exported import JSONDocument

/// The codes of Spec/wrappers.md 7 (Spec/README.md 7.16, 7.17).
extension FormatError.Code {
    /// A binary property list where an event or registration was expected.
    public static let fileKindBinaryPlist = Self("file.kind-binary-plist")
    /// An XML property list where an event was expected.
    public static let fileKindXMLPlist = Self("file.kind-xml-plist")
    /// An SQLite database where an event or registration was expected.
    public static let fileKindSQLite = Self("file.kind-sqlite")
    /// Bytes in no format the toolkit reads.
    public static let fileKindUnknown = Self("file.kind-unknown")

    /// An encrypted file, and no password was given.
    public static let wrapPasswordRequired = Self("wrap.password-required")
    /// The HMAC of an encrypted file does not match: a wrong password, or bytes changed.
    public static let wrapBadPassword = Self("wrap.bad-password")
    /// An encrypted file whose HMAC matches but whose plaintext padding is invalid.
    public static let wrapBadPadding = Self("wrap.bad-padding")
    /// A wrapper's structure ends before its last field.
    public static let wrapTruncated = Self("wrap.truncated")
    /// A zip archive's structure is inconsistent.
    public static let wrapZipCorrupt = Self("wrap.zip-corrupt")
    /// A zip archive holds no file, or more than one entry.
    public static let wrapZipEntryCount = Self("wrap.zip-entry-count")
    /// A zip archive uses a feature outside Spec/wrappers.md 4 (ZIP64, encryption, another method, several disks).
    public static let wrapZipUnsupported = Self("wrap.zip-unsupported")
    /// A zip entry's CRC-32 does not match its content.
    public static let wrapZipChecksum = Self("wrap.zip-checksum")
    /// A deflated zip entry would inflate to more than 100 times its stored size.
    public static let wrapInflateRatio = Self("wrap.inflate-ratio")
    /// The unwrapped content would exceed the size limit.
    public static let wrapTooLarge = Self("wrap.too-large")
    /// A third layer, or the same wrapper twice.
    public static let wrapTooManyLayers = Self("wrap.too-many-layers")
}
