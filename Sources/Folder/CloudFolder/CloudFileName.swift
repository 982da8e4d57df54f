import Foundation
import EnsembleModel

/// The four folders of an ensemble (Spec/cloud-layout.md).
package enum EnsembleSubfolder: String, CaseIterable, Sendable, Hashable {
    case stores, events, baselines, data
}

/// `_<index>of<count>` in a multipart file name (1-based).
package struct PartNumber: Hashable, Sendable {
    package var index: Int
    package var count: Int
    package static let maximumCount = 10_000
}

/// What an event file's name says: `<globalCount>_<store>_<revision>[_<i>of<n>].cdeevent`.
package struct EventFileName: Hashable, Sendable {
    package var globalCount: Int64
    package var storeIdentifier: String
    package var revision: Int64
    package var part: PartNumber?
}

/// What a baseline file's name says: `<globalCount>_<uniqueIdentifier>[_<store prefix>][_<i>of<n>].cdeevent`.
package struct BaselineFileName: Hashable, Sendable {
    package var globalCount: Int64
    package var uniqueIdentifier: String
    /// The first 8 characters of the owning store; nil for the legacy two-field name.
    package var storePrefix: String?
    package var part: PartNumber?
    package var isLegacyName: Bool { storePrefix == nil }
}

/// The kinds of debris real cloud folders contain; never read as data, always reported.
package enum DebrisKind: String, Sendable, Hashable, CaseIterable {
    case conflictedCopy, iCloudPlaceholder, duplicateFolder, partialFile, systemFile, symlink, unknownName, unknownEntry
}

/// What one directory entry of an ensemble is, decided from its folder, name and type.
package enum CloudEntry: Hashable, Sendable {
    case event(EventFileName)
    case baseline(BaselineFileName)
    case storeRegistration(storeIdentifier: String)
    case dataFile(name: String)
    case debris(DebrisKind, reason: String)
}

/// File-name grammar of Spec/cloud-layout.md.
package enum CloudFileName {
    package static let eventExtension = ".cdeevent"
    /// Extensions a wrapper may add to an event or baseline name, removed (at most two, from the
    /// end) before the name is matched (Spec/wrappers.md 5.3): `7_A_3.cdeevent.zip.enc`.
    package static let wrapperSuffixes = [".zip", ".enc"]

    /// `name` without up to two trailing wrapper suffixes.
    package static func strippingWrapperSuffixes(_ name: String) -> String { stripped(NameBytes(name)).string }

    private static func stripped(_ name: NameBytes) -> NameBytes {
        var name = name
        for _ in 0..<2 {
            guard let suffix = wrapperSuffixes.first(where: { name.hasSuffix($0) && name.count > $0.utf8.count }) else { break }
            name = name.dropLast(suffix.utf8.count)
        }
        return name
    }
    static let partialSuffixes = [".tmp", ".partial", ".part", ".download", ".crdownload", "~"]
    static let systemFiles = [".DS_Store", "Thumbs.db", "desktop.ini", "Icon\r"]

    /// Debris rules that apply to any entry of an ensemble, in precedence order, or nil.
    package static func debris(name: String, isSymlink: Bool, isDirectory: Bool, size: Int64?) -> CloudEntry? {
        debris(NameBytes(name), isSymlink: isSymlink, isDirectory: isDirectory, size: size)
    }

    private static func debris(_ name: NameBytes, isSymlink: Bool, isDirectory: Bool, size: Int64?) -> CloudEntry? {
        if isSymlink {
            return .debris(.symlink, reason: "a symbolic link; never followed")
        }
        if let arriving = placeholderName(name) {
            return .debris(.iCloudPlaceholder, reason: "an iCloud placeholder: the file \"\(arriving.string)\" has not been downloaded")
        }
        if systemFiles.contains(where: { name.bytes.elementsEqual($0.utf8) }) || name.hasPrefix("._") {
            return .debris(.systemFile, reason: "a file the operating system made, not part of the ensemble")
        }
        if partialSuffixes.contains(where: name.hasSuffix) || name.hasPrefix(".~") {
            return .debris(.partialFile, reason: "a partial or temporary file left by an interrupted transfer")
        }
        if !isDirectory && size == 0 && stripped(name).hasSuffix(eventExtension) {
            return .debris(.partialFile, reason: "an empty event file: an upload that never completed")
        }
        if let open = name.bytes.firstIndex(of: UInt8(ascii: "(")), name.bytes[open...].contains(UInt8(ascii: ")")) {
            return .debris(.conflictedCopy, reason: "a conflicted copy made by a sync service; the original name holds the real file")
        }
        return nil
    }

    /// `.NAME.icloud` gives NAME (not empty).
    private static func placeholderName(_ name: NameBytes) -> NameBytes? {
        let suffix = ".icloud"
        return name.hasPrefix(".") && name.hasSuffix(suffix) && name.count > suffix.utf8.count + 1 ? name.dropFirst(1).dropLast(suffix.utf8.count) : nil
    }

    /// The name of the file a placeholder or a partial file will become (`.7_A_3.cdeevent.icloud`
    /// and `7_A_3.cdeevent.tmp` both give `7_A_3.cdeevent`); nil for any other name.
    package static func arrivingName(_ name: String) -> String? {
        let bytes = NameBytes(name)
        if let arriving = placeholderName(bytes) { return arriving.string }
        if let suffix = partialSuffixes.first(where: bytes.hasSuffix), bytes.count > suffix.utf8.count {
            return bytes.dropLast(suffix.utf8.count).string
        }
        if bytes.hasPrefix(".~") && bytes.count > 2 { return bytes.dropFirst(2).string }
        return nil
    }

    /// A folder such as `events 2`: a sync service's duplicate of a known folder.
    package static func duplicateFolderOriginal(_ name: String) -> EnsembleSubfolder? {
        let parts = name.split(separator: " ")
        guard parts.count == 2, let folder = EnsembleSubfolder(rawValue: String(parts[0])),
            parts[1].count == 1, let digit = parts[1].first?.wholeNumberValue, (2...9).contains(digit)
        else { return nil }
        return folder
    }

    /// Classifies an entry of `folder`. Debris rules come first; then the folder's grammar.
    package static func classify(
        name: String, in folder: EnsembleSubfolder, isDirectory: Bool = false,
        isSymlink: Bool = false, isSpecial: Bool = false, size: Int64? = nil
    ) -> CloudEntry {
        let bytes = NameBytes(name)
        // Rule 4's empty event file is a regular file: a FIFO's size says nothing.
        if let debris = debris(bytes, isSymlink: isSymlink, isDirectory: isDirectory, size: isSpecial ? nil : size) { return debris }
        // A FIFO, socket or device is never opened: opening a FIFO for reading blocks forever
        // (Spec/cloud-layout.md section 7, rule 7).
        if isSpecial {
            return .debris(.unknownEntry, reason: "a FIFO, socket or device, not a regular file; never opened")
        }
        if isDirectory {
            return .debris(.unknownName, reason: "a folder inside \(folder.rawValue)/, where only files belong")
        }
        switch folder {
        case .stores:
            guard !bytes.bytes.contains(UInt8(ascii: "_")), !bytes.hasPrefix(".") else {
                return .debris(.unknownName, reason: "not a store registration: store identifiers never contain \"_\" or start with \".\"")
            }
            return .storeRegistration(storeIdentifier: name)
        case .data:
            return .dataFile(name: name)
        case .events:
            if let event = parseEvent(bytes) { return .event(event) }
            return .debris(.unknownName, reason: "not an event file name (<globalCount>_<store>_<revision>[_<i>of<n>].cdeevent)")
        case .baselines:
            if let baseline = parseBaseline(bytes) { return .baseline(baseline) }
            return .debris(.unknownName, reason: "not a baseline file name (<globalCount>_<uniqueIdentifier>[_<store prefix>][_<i>of<n>].cdeevent)")
        }
    }

    /// Parses an event file name (Spec/cloud-layout.md section 4.3); nil when it does not
    /// follow the grammar.
    package static func parseEvent(_ name: String) -> EventFileName? { parseEvent(NameBytes(name)) }

    private static func parseEvent(_ name: NameBytes) -> EventFileName? {
        guard let fields = stem(name), fields.count == 3 || fields.count == 4,
            let globalCount = counter(fields[0]), let revision = counter(fields[2]), fields[1].count > 0
        else { return nil }
        var part: PartNumber?
        if fields.count == 4 {
            guard let suffix = partSuffix(fields[3]) else { return nil }
            part = suffix
        }
        return EventFileName(globalCount: globalCount, storeIdentifier: fields[1].string, revision: revision, part: part)
    }

    /// Parses a baseline file name, current or legacy (Spec/cloud-layout.md section 4.3); nil
    /// when it does not follow the grammar. A third field of exactly 8 UTF-16 code units is
    /// always a store prefix, never a part suffix.
    package static func parseBaseline(_ name: String) -> BaselineFileName? { parseBaseline(NameBytes(name)) }

    private static func parseBaseline(_ name: NameBytes) -> BaselineFileName? {
        guard let fields = stem(name), (2...4).contains(fields.count),
            let globalCount = counter(fields[0]), fields[1].count > 0
        else { return nil }
        func baseline(prefix: String?, part: PartNumber?) -> BaselineFileName {
            BaselineFileName(globalCount: globalCount, uniqueIdentifier: fields[1].string, storePrefix: prefix, part: part)
        }
        switch fields.count {
        case 2:
            return baseline(prefix: nil, part: nil)
        case 3:
            let third = fields[2].string
            if third.utf16.count == 8 { return baseline(prefix: third, part: nil) }
            return partSuffix(fields[2]).map { baseline(prefix: nil, part: $0) }
        default:
            let third = fields[2].string
            guard third.utf16.count == 8, let part = partSuffix(fields[3]) else { return nil }
            return baseline(prefix: third, part: part)
        }
    }

    /// For the name of one part of a multipart event or baseline, the name its set shares (the
    /// stem without the part field: `7_A_3_1of2.cdeevent.zip` gives `7_A_3`) and its part.
    package static func partOfSet(_ name: String) -> (set: String, part: PartNumber)? {
        let bytes = NameBytes(name)
        guard let part = parseEvent(bytes)?.part ?? parseBaseline(bytes)?.part, let fields = stem(bytes) else { return nil }
        return (fields.dropLast().map(\.string).joined(separator: "_"), part)
    }

    /// The `_`-separated fields of a `.cdeevent` name, or nil for another extension.
    private static func stem(_ wrappedName: NameBytes) -> [NameBytes]? {
        let name = stripped(wrappedName)
        guard name.hasSuffix(eventExtension), name.count > eventExtension.utf8.count else { return nil }
        return name.dropLast(eventExtension.utf8.count).bytes.split(separator: UInt8(ascii: "_"), omittingEmptySubsequences: false).map(NameBytes.init)
    }

    /// `<i>of<n>` with 1 <= i <= n <= 10,000, both without leading zeros.
    private static func partSuffix(_ field: NameBytes) -> PartNumber? {
        let bytes = field.bytes
        // Exactly one "of": the two numbers around it are digits only, so any other "o" or "f"
        // makes one of them invalid.
        guard let of = bytes.indices.first(where: { bytes[$0] == UInt8(ascii: "o") && bytes[($0 + 1)...].first == UInt8(ascii: "f") }),
            let index = positive(NameBytes(bytes[..<of])), let count = positive(NameBytes(bytes[(of + 2)...])), index <= count
        else { return nil }
        return PartNumber(index: index, count: count)
    }

    /// A global count or revision: `0` or digits without a leading zero, within int64.
    private static func counter(_ text: NameBytes) -> Int64? {
        guard let first = text.bytes.first, first != UInt8(ascii: "0") || text.count == 1 else { return nil }
        var value: Int64 = 0
        for byte in text.bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (tens, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = tens.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow && !carry else { return nil }
            value = sum
        }
        return value
    }

    private static func positive(_ text: NameBytes) -> Int? {
        guard let value = counter(text), value > 0, value <= Int64(PartNumber.maximumCount) else { return nil }
        return Int(value)
    }
}

/// A name as its UTF-8 bytes. Every delimiter and suffix of the grammar is ASCII, and an ASCII
/// byte of UTF-8 is always a whole scalar, so comparing and splitting bytes is the comparison
/// over Unicode scalar values that Spec/cloud-layout.md 4.1 defines. (`Character`s are not: a
/// `_` followed by a combining mark is one character, and no `_` to them; and breaking every
/// name into characters was most of the time a folder listing took.)
private struct NameBytes {
    var bytes: ArraySlice<UInt8>

    init(_ name: String) { bytes = ArraySlice(name.utf8) }
    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var count: Int { bytes.count }
    /// The bytes as text: whole scalars, since they were cut only next to ASCII bytes.
    var string: String { String(decoding: bytes, as: UTF8.self) }

    func hasPrefix(_ prefix: String) -> Bool { bytes.starts(with: prefix.utf8) }
    func hasSuffix(_ suffix: String) -> Bool { bytes.count >= suffix.utf8.count && bytes.suffix(suffix.utf8.count).elementsEqual(suffix.utf8) }
    func dropFirst(_ count: Int) -> NameBytes { NameBytes(bytes.dropFirst(count)) }
    func dropLast(_ count: Int) -> NameBytes { NameBytes(bytes.dropLast(count)) }
}
