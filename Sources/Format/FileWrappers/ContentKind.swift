/// What a file holds, decided from its first bytes alone (Spec/wrappers.md 2). Names say
/// nothing reliable: no package source says how Ensembles 2's wrappers rename files, so the
/// content decides.
package enum ContentKind: String, Sendable, Hashable, CaseIterable {
    /// First byte 0x89: the v2 binary event encoding (Spec/v2-binary.md decides the rest).
    case v2Binary = "v2-binary"
    /// Text whose first significant byte is printable ASCII (`{`, `[`, ...): read as JSON, so
    /// that text which is not JSON gets the JSON reader's precise error.
    case json
    /// A zip archive (a local file header `PK\x03\x04`, or the end record `PK\x05\x06` of an
    /// empty archive): a wrapper (Spec/wrappers.md 4).
    case zip
    /// RNCryptor data format v3 (`0x03`, options `0x00` or `0x01`, at least the smallest such
    /// file's length): a wrapper (Spec/wrappers.md 3).
    case encrypted
    /// `bplist`: an Apple binary property list.
    case binaryPropertyList = "binary-plist"
    /// An XML property list (`<` and `<plist` within the first 1,024 bytes).
    case xmlPropertyList = "xml-plist"
    /// `SQLite format 3\0`: an SQLite database.
    case sqlite
    /// None of the above.
    case unknown

    /// Whether the toolkit removes this kind as a layer and reads what it holds.
    package var isWrapper: Bool { self == .zip || self == .encrypted }

    /// The `file.kind-*` code of a kind that no reader of the toolkit reads; nil for the kinds
    /// that are read or unwrapped.
    package var unreadableCode: FormatError.Code? {
        switch self {
        case .binaryPropertyList: .fileKindBinaryPlist
        case .xmlPropertyList: .fileKindXMLPlist
        case .sqlite: .fileKindSQLite
        case .unknown: .fileKindUnknown
        case .v2Binary, .json, .zip, .encrypted: nil
        }
    }

    static let zipLocalHeader: [UInt8] = [0x50, 0x4B, 0x03, 0x04]
    static let zipEmptyArchive: [UInt8] = [0x50, 0x4B, 0x05, 0x06]
    static let binaryPlistMagic = Array("bplist".utf8)
    static let sqliteMagic = Array("SQLite format 3".utf8) + [0]
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    static let xmlWindow = 1024

    /// The kind of `bytes`, by the rules of Spec/wrappers.md 2, in their order.
    package static func detect(_ bytes: some Collection<UInt8>) -> ContentKind {
        // Read in place: a copy of the first kilobyte was an allocation large enough to make the
        // allocator tidy up, for every file of a folder.
        let head = bytes.prefix(xmlWindow)
        if head.first == 0x89 { return .v2Binary }
        if head.starts(with: zipLocalHeader) || head.starts(with: zipEmptyArchive) { return .zip }
        if head.first == RNCryptor.version, let second = head.dropFirst().first, let mode = RNCryptor.Mode(rawValue: second),
            bytes.count >= mode.minimumLength
        {
            return .encrypted
        }
        if head.starts(with: binaryPlistMagic) { return .binaryPropertyList }
        if head.starts(with: sqliteMagic) { return .sqlite }
        // Text: an optional byte order mark, then optional JSON whitespace.
        let text = (head.starts(with: byteOrderMark) ? head.dropFirst(byteOrderMark.count) : head[...]).drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        guard let first = text.first else { return .json }  // empty or blank: the JSON reader says so
        if first == UInt8(ascii: "<"), containsPlistTag(Array(head)) { return .xmlPropertyList }
        if (0x20...0x7E).contains(first) { return .json }
        // A byte order mark before anything else is still text for the JSON reader to refuse.
        return head.starts(with: byteOrderMark) ? .json : .unknown
    }

    private static func containsPlistTag(_ head: [UInt8]) -> Bool {
        let tag = Array("<plist".utf8)
        guard head.count >= tag.count else { return false }
        for start in 0...(head.count - tag.count) where head[start] == tag[0] && Array(head[start..<(start + tag.count)]) == tag {
            return true
        }
        return false
    }

    /// A person-readable name of the kind, for messages.
    package var displayName: String {
        switch self {
        case .v2Binary: "a v2 binary event file"
        case .json: "JSON text"
        case .zip: "a zip archive"
        case .encrypted: "an RNCryptor v3 encrypted file"
        case .binaryPropertyList: "an Apple binary property list"
        case .xmlPropertyList: "an XML property list"
        case .sqlite: "an SQLite database"
        case .unknown: "a file in no format the toolkit reads"
        }
    }
}

/// The first bytes of a file as messages show them: up to 16 bytes in hexadecimal, then the
/// printable ASCII among them (Spec/wrappers.md 6).
package func firstBytesDescription(_ bytes: some Collection<UInt8>, count: Int = 16) -> String {
    let head = Array(bytes.prefix(count))
    guard !head.isEmpty else { return "no bytes" }
    let hex = head.map { byte in
        let text = String(byte, radix: 16, uppercase: true)
        return byte < 16 ? "0" + text : text
    }.joined(separator: " ")
    let ascii = String(decoding: head.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
    return "first bytes \(hex) (\"\(ascii)\")"
}
