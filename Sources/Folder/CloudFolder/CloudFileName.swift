import Foundation
import EnsembleModel

/// The four folders of an ensemble (Spec/cloud-layout.md).
package enum EnsembleSubfolder: String, CaseIterable, Sendable, Hashable {
    case stores, events, baselines, data
}

/// `_<index>of<count>` in a multipart file name (1-based).
package struct PartNumber: Hashable, Sendable {
    public var index: Int
    public var count: Int
    public static let maximumCount = 10_000
}

/// What an event file's name says: `<globalCount>_<store>_<revision>[_<i>of<n>].cdeevent`.
package struct EventFileName: Hashable, Sendable {
    public var globalCount: Int64
    public var storeIdentifier: String
    public var revision: Int64
    public var part: PartNumber?
}

/// What a baseline file's name says: `<globalCount>_<uniqueIdentifier>[_<store prefix>][_<i>of<n>].cdeevent`.
package struct BaselineFileName: Hashable, Sendable {
    public var globalCount: Int64
    public var uniqueIdentifier: String
    /// The first 8 characters of the owning store; nil for the legacy two-field name.
    public var storePrefix: String?
    public var part: PartNumber?
    public var isLegacyName: Bool { storePrefix == nil }
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
    public static let eventExtension = ".cdeevent"
    /// Extensions a wrapper may add to an event or baseline name, removed (at most two, from the
    /// end) before the name is matched (Spec/wrappers.md 5.3): `7_A_3.cdeevent.zip.enc`.
    public static let wrapperSuffixes = [".zip", ".enc"]

    /// `name` without up to two trailing wrapper suffixes.
    public static func strippingWrapperSuffixes(_ name: String) -> String {
        var stripped = Substring(name)
        for _ in 0..<2 {
            guard let suffix = wrapperSuffixes.first(where: { stripped.hasSuffix($0) && stripped.count > $0.count }) else { break }
            stripped = stripped.dropLast(suffix.count)
        }
        return String(stripped)
    }
    static let partialSuffixes = [".tmp", ".partial", ".part", ".download", ".crdownload", "~"]
    static let systemFiles: Set<String> = [".DS_Store", "Thumbs.db", "desktop.ini", "Icon\r"]

    /// Debris rules that apply to any entry of an ensemble, in precedence order, or nil.
    public static func debris(name: String, isSymlink: Bool, isDirectory: Bool, size: Int64?) -> CloudEntry? {
        if isSymlink {
            return .debris(.symlink, reason: "a symbolic link; never followed")
        }
        if name.hasPrefix(".") && name.hasSuffix(".icloud") && name.count > ".icloud".count + 1 {
            return .debris(.iCloudPlaceholder, reason: "an iCloud placeholder: the file \"\(String(name.dropFirst().dropLast(7)))\" has not been downloaded")
        }
        if systemFiles.contains(name) || name.hasPrefix("._") {
            return .debris(.systemFile, reason: "a file the operating system made, not part of the ensemble")
        }
        if partialSuffixes.contains(where: name.hasSuffix) || name.hasPrefix(".~") {
            return .debris(.partialFile, reason: "a partial or temporary file left by an interrupted transfer")
        }
        if !isDirectory && size == 0 && strippingWrapperSuffixes(name).hasSuffix(eventExtension) {
            return .debris(.partialFile, reason: "an empty event file: an upload that never completed")
        }
        if let open = name.firstIndex(of: "("), name[open...].contains(")") {
            return .debris(.conflictedCopy, reason: "a conflicted copy made by a sync service; the original name holds the real file")
        }
        return nil
    }

    /// The name of the file a placeholder or a partial file will become (`.7_A_3.cdeevent.icloud`
    /// and `7_A_3.cdeevent.tmp` both give `7_A_3.cdeevent`); nil for any other name.
    public static func arrivingName(_ name: String) -> String? {
        if name.hasPrefix(".") && name.hasSuffix(".icloud") && name.count > ".icloud".count + 1 { return String(name.dropFirst().dropLast(7)) }
        if let suffix = partialSuffixes.first(where: name.hasSuffix), name.count > suffix.count { return String(name.dropLast(suffix.count)) }
        if name.hasPrefix(".~") && name.count > 2 { return String(name.dropFirst(2)) }
        return nil
    }

    /// A folder such as `events 2`: a sync service's duplicate of a known folder.
    public static func duplicateFolderOriginal(_ name: String) -> EnsembleSubfolder? {
        let parts = name.split(separator: " ")
        guard parts.count == 2, let folder = EnsembleSubfolder(rawValue: String(parts[0])),
            parts[1].count == 1, let digit = parts[1].first?.wholeNumberValue, (2...9).contains(digit)
        else { return nil }
        return folder
    }

    /// Classifies an entry of `folder`. Debris rules come first; then the folder's grammar.
    public static func classify(
        name: String, in folder: EnsembleSubfolder, isDirectory: Bool = false,
        isSymlink: Bool = false, isSpecial: Bool = false, size: Int64? = nil
    ) -> CloudEntry {
        // Rule 4's empty event file is a regular file: a FIFO's size says nothing.
        if let debris = debris(name: name, isSymlink: isSymlink, isDirectory: isDirectory, size: isSpecial ? nil : size) { return debris }
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
            guard !name.contains("_"), !name.hasPrefix(".") else {
                return .debris(.unknownName, reason: "not a store registration: store identifiers never contain \"_\" or start with \".\"")
            }
            return .storeRegistration(storeIdentifier: name)
        case .data:
            return .dataFile(name: name)
        case .events:
            if let event = parseEvent(name) { return .event(event) }
            return .debris(.unknownName, reason: "not an event file name (<globalCount>_<store>_<revision>[_<i>of<n>].cdeevent)")
        case .baselines:
            if let baseline = parseBaseline(name) { return .baseline(baseline) }
            return .debris(.unknownName, reason: "not a baseline file name (<globalCount>_<uniqueIdentifier>[_<store prefix>][_<i>of<n>].cdeevent)")
        }
    }

    /// Parses an event file name (Spec/cloud-layout.md section 4.3); nil when it does not
    /// follow the grammar.
    public static func parseEvent(_ name: String) -> EventFileName? {
        guard let fields = stem(name), fields.count == 3 || fields.count == 4,
            let globalCount = counter(fields[0]), let revision = counter(fields[2]), !fields[1].isEmpty
        else { return nil }
        var part: PartNumber?
        if fields.count == 4 {
            guard let suffix = partSuffix(fields[3]) else { return nil }
            part = suffix
        }
        return EventFileName(globalCount: globalCount, storeIdentifier: fields[1], revision: revision, part: part)
    }

    /// Parses a baseline file name, current or legacy (Spec/cloud-layout.md section 4.3); nil
    /// when it does not follow the grammar. A third field of exactly 8 UTF-16 code units is
    /// always a store prefix, never a part suffix.
    public static func parseBaseline(_ name: String) -> BaselineFileName? {
        guard let fields = stem(name), (2...4).contains(fields.count),
            let globalCount = counter(fields[0]), !fields[1].isEmpty
        else { return nil }
        func baseline(prefix: String?, part: PartNumber?) -> BaselineFileName {
            BaselineFileName(globalCount: globalCount, uniqueIdentifier: fields[1], storePrefix: prefix, part: part)
        }
        switch fields.count {
        case 2:
            return baseline(prefix: nil, part: nil)
        case 3:
            if fields[2].utf16.count == 8 { return baseline(prefix: fields[2], part: nil) }
            return partSuffix(fields[2]).map { baseline(prefix: nil, part: $0) }
        default:
            guard fields[2].utf16.count == 8, let part = partSuffix(fields[3]) else { return nil }
            return baseline(prefix: fields[2], part: part)
        }
    }

    /// The `_`-separated fields of a `.cdeevent` name, or nil for another extension.
    private static func stem(_ wrappedName: String) -> [String]? {
        let name = strippingWrapperSuffixes(wrappedName)
        guard name.hasSuffix(eventExtension), name.count > eventExtension.count else { return nil }
        return name.dropLast(eventExtension.count).split(separator: "_", omittingEmptySubsequences: false).map(String.init)
    }

    /// `<i>of<n>` with 1 <= i <= n <= 10,000, both without leading zeros.
    static func partSuffix(_ field: String) -> PartNumber? {
        let pieces = field.components(separatedBy: "of")
        guard pieces.count == 2, let index = positive(pieces[0]), let count = positive(pieces[1]), index <= count else { return nil }
        return PartNumber(index: index, count: count)
    }

    /// A global count or revision: `0` or digits without a leading zero, within int64.
    static func counter(_ text: String) -> Int64? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit), text == "0" || !text.hasPrefix("0") else { return nil }
        return Int64(text)
    }

    private static func positive(_ text: String) -> Int? {
        guard let value = counter(text), value > 0, value <= Int64(PartNumber.maximumCount) else { return nil }
        return Int(value)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
