import Foundation
import Crypto
import EnsembleModel
import JSONDocument
import CFileSystem
import TemporaryFiles

extension FormatError.Code {
    /// The quarantine folder cannot be used: inside the cloud folder, not empty and not a
    /// quarantine, or a quarantine of another folder (Spec/repair.md 4).
    public static let repairQuarantine = Self("repair.quarantine")
    /// A move or folder removal failed; the journal says how far the repair got (Spec/repair.md 5).
    public static let repairMoveFailed = Self("repair.move-failed")
    /// A file changed or was replaced while the repair moved it: both versions are kept
    /// (Spec/repair.md 5.2).
    public static let repairSourceChanged = Self("repair.source-changed")
    /// Undo found something new where a moved file was: it is left in the quarantine
    /// (Spec/repair.md 6).
    public static let repairUndoBlocked = Self("repair.undo-blocked")
    /// The journal cannot be read, was edited or cut, or names a path no repair moves
    /// (Spec/repair.md 5).
    public static let repairJournal = Self("repair.journal")
    /// The cloud root the journal names is no longer there: undo does not re-create it
    /// (Spec/repair.md 6).
    public static let repairCloudMoved = Self("repair.cloud-moved")
}

/// What undoing a repair did (Spec/repair.md 6): the files put back, and the steps refused with
/// the reason.
public struct RepairUndoResult: Sendable {
    public var restored = 0
    /// Files the repair had added to the cloud (a cure's baseline, Spec/repair.md 3.6), moved
    /// back into the quarantine because they were unchanged.
    public var withdrawn = 0
    public var refused: [FormatError] = []

    public init() {}
}

/// The write-ahead journal of a repair (Spec/repair.md 5): every move and folder removal is
/// appended and flushed before it happens and marked done after, so that a repair stopped at any
/// moment, even by SIGKILL or a power cut, can be completed or undone. Nothing it does deletes a
/// file: a file is renamed, or copied, flushed and checked by SHA-256 before its original is
/// unlinked, and only while its name still names the file that was copied; folders are removed
/// only when empty. Every path it touches is derived from the cloud root and the quarantine
/// folder and reached by descriptor without following links (``DirectoryHandle``), whatever the
/// journal says.
package final class RepairJournal {
    /// One recorded step and how far it got.
    struct Step {
        var number: Int
        var operation: Operation
        var done = false
        var undone = false
        var undoStarted = false
        /// For a folder removal: whether the folder was removed (it is kept when not empty).
        var removed = false
    }

    enum Operation {
        case move(from: String, to: String, sha256: String, size: Int64)
        case removeFolder(String)
        /// A file the repair adds to the cloud (Spec/repair.md 5.1, 3.6): written first at `from`
        /// in the quarantine, then moved to `to`; undo moves it back to `from` only if unchanged.
        case add(from: String, to: String, sha256: String, size: Int64)
    }

    /// The header line's facts.
    private struct Header {
        var cloudRoot: String
        var quarantine: String
        /// Journal format 2 chains a check through every line (Spec/repair.md 5.1); format 1 has none.
        var checked: Bool
    }

    package let quarantine: URL
    package let cloudRoot: URL
    /// The quarantine as the header names it: the prefix of the paths the steps give for files
    /// in the quarantine, which are found below ``quarantine`` wherever the folder now is.
    private let recordedQuarantine: String
    private let checked: Bool
    private let journalURL: URL
    private var handle: FileHandle
    private(set) var steps: [Step] = []
    /// The check of the last line written (Spec/repair.md 5.1).
    private var lastCheck: String
    /// Nil when the cloud root is gone and nothing is left to do.
    private let cloudParent: DirectoryHandle?
    private let quarantineFolder: DirectoryHandle
    /// Called during a copy across file systems with the original's path: tests replace files
    /// there, as a sync service may, or stop the step there by throwing, as a crash would.
    package var duringCopy: ((CopyStage, String) throws(FormatError) -> Void)?

    /// Whether a copy across file systems is made in a file without a name where the file system
    /// can (Spec/repair.md 5.2); tests turn it off to take the path of file systems that cannot.
    package var copiesIntoUnnamedFiles = true

    /// How far a copy across file systems got when ``duringCopy`` is called.
    package enum CopyStage: Sendable {
        /// Copied and checked, not yet given its name at the destination.
        case copied
        /// Published at the destination; the original not yet unlinked.
        case published
        /// The original checked by its name, not yet set aside.
        case settingAside
        /// The original set aside and found to be the file copied; not yet unlinked.
        case checked
    }

    /// The journal's file name inside the quarantine folder.
    package static let fileName = "journal.jsonl"
    /// Where moved files go inside the quarantine folder.
    package static let filesFolder = "files"
    /// The suffix of a copy in progress across file systems, followed by `-<step>` (Spec/repair.md 5.2).
    static let partialSuffix = ".repair-partial"
    /// The name an original takes, beside itself, while it is checked before its unlink (Spec/repair.md 5.2 rule 4).
    static let asideSuffix = ".repair-unlink"

    /// The aside name of `name` for step `step`.
    static func aside(_ name: String, step: Int) -> String { name + asideSuffix + "-\(step)" }
    /// The journal format this version writes.
    static let format: Int64 = 2

    /// Opens the journal of `quarantine`, creating the folder and the journal for `cloudRoot`
    /// when the folder does not exist or is empty. A folder that holds anything else, or the
    /// journal of another cloud root, is refused; so is a journal another process has open.
    package init(quarantine: URL, cloudRoot: URL) throws(FormatError) {
        self.quarantine = quarantine.standardizedFileURL
        self.cloudRoot = cloudRoot.standardizedFileURL
        journalURL = self.quarantine.appendingPathComponent(Self.fileName)
        let existing = try Self.names(in: self.quarantine)
        if !existing.isEmpty && !existing.contains(Self.fileName) {
            throw FormatError(.repairQuarantine, "the quarantine folder is not empty and holds no repair journal", location: .init(file: quarantine.path))
        }
        do {
            try Self.createFolders(self.quarantine.path)
            handle = try TemporaryFiles.openFile(journalURL, truncating: false)
        } catch {
            throw FormatError(.repairQuarantine, "cannot create the journal: \(error.localizedDescription)", location: .init(file: journalURL.path))
        }
        // One process at a time: another run's header or steps must not be cut off or
        // interleaved with this one's.
        guard flock(handle.fileDescriptor, LOCK_EX | LOCK_NB) == 0 else {
            throw FormatError(.repairQuarantine, "another repair or undo is using this quarantine", location: .init(file: journalURL.path))
        }
        var (header, steps, length, last) = try Self.read(journalURL)
        if header == nil {
            // A new journal, or this repair's own whose creation was stopped before its header
            // was whole (a byte prefix of the header written now): no step was ever written, so
            // nothing moved and the header can be written afresh. Anything else is not ours.
            let fresh = Header(cloudRoot: self.cloudRoot.path, quarantine: self.quarantine.path, checked: true)
            let (line, check) = Self.line(Self.headerRecord(fresh), after: "")
            let found = FileManager.default.contents(atPath: journalURL.path) ?? Data()
            guard existing.allSatisfy({ $0 == Self.fileName }), found.count < line.count, line.starts(with: found) else {
                throw FormatError(
                    .repairQuarantine, "the quarantine holds a journal.jsonl that is not the journal of a repair of \(self.cloudRoot.path)",
                    location: .init(file: journalURL.path))
            }
            do {
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: line)
                try handle.synchronize()
            } catch {
                throw FormatError(.repairQuarantine, "cannot create the journal: \(error.localizedDescription)", location: .init(file: journalURL.path))
            }
            (header, steps, length, last) = (fresh, [], line.count, check)
        }
        // Every run: a run stopped before this left the journal's entry unsynced.
        Self.syncFolder(self.quarantine.path)
        guard let header, exactlyEqual(header.cloudRoot, self.cloudRoot.path) else {
            throw FormatError(
                .repairQuarantine, "this quarantine belongs to the repair of \(header?.cloudRoot ?? ""), not of \(self.cloudRoot.path)",
                location: .init(file: quarantine.path))
        }
        recordedQuarantine = header.quarantine
        checked = header.checked
        lastCheck = last
        // The cloud root must still be where the journal says when anything is left to finish
        // or undo: undo never re-creates it.
        let parent = try DirectoryHandle.openForRepair(self.cloudRoot.deletingLastPathComponent().path)
        let isFolder = parent?.status(self.cloudRoot.lastPathComponent).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
        guard isFolder || steps.allSatisfy(\.undone) else {
            throw FormatError(
                .repairCloudMoved, "the cloud folder this repair moved files from is no longer there; nothing was changed",
                location: .init(file: self.cloudRoot.path))
        }
        cloudParent = isFolder ? parent : nil
        guard let held = try DirectoryHandle.openForRepair(self.quarantine.path) else {
            throw FormatError(.repairQuarantine, "the quarantine folder is gone", location: .init(file: self.quarantine.path))
        }
        quarantineFolder = held
        self.steps = steps
        nextNumber = (steps.map(\.number).max() ?? 0) + 1
        do {
            // A line cut short by a crash is cut off, so that the next record starts a line.
            if let size = try? handle.seekToEnd(), size > UInt64(length) {
                try handle.truncate(atOffset: UInt64(length))
                try handle.synchronize()
            }
            _ = try handle.seekToEnd()
        } catch {
            throw FormatError(.repairJournal, "cannot append to the journal: \(error.localizedDescription)", location: .init(file: journalURL.path))
        }
        for step in steps { try checkPaths(step) }
    }

    deinit { try? handle.close() }

    /// The names in `folder`; none when it does not exist. A folder that cannot be listed is
    /// refused rather than taken for an empty one.
    private static func names(in folder: URL) throws(FormatError) -> [String] {
        guard Self.exists(folder.path) else { return [] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw FormatError(.repairQuarantine, "the quarantine folder cannot be listed: \(error.localizedDescription)", location: .init(file: folder.path))
        }
    }

    /// Undoes the repair journaled in `quarantine` (``undo()``); nothing to put back when the
    /// repair was stopped before its journal's header was whole.
    package static func undo(quarantine: URL) throws(FormatError) -> RepairUndoResult {
        guard let journal = try openForUndo(quarantine) else { return RepairUndoResult() }
        try journal.checkAccounted()
        return try journal.undo()
    }

    /// The journal of `quarantine`, opened for undo (the cloud root comes from its header); nil
    /// when it is alone in its folder and cut before its header was whole (no line feed, and the
    /// bytes a header starts with).
    private static func openForUndo(_ quarantine: URL) throws(FormatError) -> RepairJournal? {
        let url = quarantine.standardizedFileURL.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw FormatError(.repairJournal, "no repair journal in this folder", location: .init(file: quarantine.path))
        }
        guard let header = try read(url).header else {
            let found = FileManager.default.contents(atPath: url.path) ?? Data()
            let start = Data(#"{"check":""#.utf8)
            let startV1 = Data(#"{"cloudRoot":""#.utf8)
            let isCutHeader =
                !found.contains(UInt8(ascii: "\n"))
                && [start, startV1].contains { found.count <= $0.count ? $0.starts(with: found) : found.starts(with: $0) }
            guard isCutHeader, try names(in: quarantine.standardizedFileURL) == [fileName] else {
                throw FormatError(.repairJournal, "the journal has no header line", location: .init(file: url.path))
            }
            return nil
        }
        return try RepairJournal(quarantine: quarantine, cloudRoot: URL(fileURLWithPath: header.cloudRoot))
    }

    /// Creates `path` and its missing ancestors, flushing each new folder's entry in its parent,
    /// so that a file renamed into it after a flush survives a power cut.
    private static func createFolders(_ path: String) throws {
        var missing: [String] = []
        var folder = path
        while !Self.exists(folder) && folder != "/" && !folder.isEmpty {
            missing.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        guard !missing.isEmpty else { return }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for created in missing.reversed() { syncFolder((created as NSString).deletingLastPathComponent) }
    }

    private static func headerRecord(_ header: Header) -> JSONObject {
        JSONObject([("journal", JSONValue(format)), ("cloudRoot", .string(header.cloudRoot)), ("quarantine", .string(header.quarantine))])
    }

    /// The check of a record (Spec/repair.md 5.1): the first 16 bytes, in hex, of the SHA-256 of
    /// the previous line's check followed by the record's canonical JSON without its check. A
    /// line edited, removed or inserted breaks every check after it.
    private static func check(of record: JSONObject, after previous: String) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(previous.utf8))
        hasher.update(data: JSONWriter().bytes(.object(record)))
        return lowercaseHex(hasher.finalize().prefix(16))
    }

    /// A record as a journal line with its check, and the check.
    private static func line(_ record: JSONObject, after previous: String) -> (Data, String) {
        let check = check(of: record, after: previous)
        var checked = record
        checked["check"] = .string(check)
        return (Data((JSONWriter().string(.object(checked)) + "\n").utf8), check)
    }

    /// The header, the steps with what each record says of them, the length of the whole lines
    /// and the last line's check. A last line cut short by a crash is ignored: it was never
    /// flushed as a whole, so its step never began. The header is nil when not even it is whole
    /// (then there are no steps). A line whose check does not follow from the lines before it
    /// was edited, and the journal is refused.
    private static func read(_ url: URL) throws(FormatError) -> (header: Header?, steps: [Step], length: Int, lastCheck: String) {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw FormatError(.repairJournal, "the journal cannot be read", location: .init(file: url.path))
        }
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        var length = data.count
        if let last = lines.last, data.last != UInt8(ascii: "\n") || (try? JSONParser.parse(Array(last))) == nil {
            length -= last.count + (data.last == UInt8(ascii: "\n") ? 1 : 0)
            lines.removeLast()
        }
        guard let first = lines.first else { return (nil, [], 0, "") }
        func failure(_ line: Int, _ what: String) -> FormatError {
            FormatError(.repairJournal, "line \(line): \(what)", location: .init(file: url.path))
        }
        guard let headerObject = (try? JSONParser.parse(Array(first)))?.objectValue, let root = headerObject["cloudRoot"]?.stringValue else {
            throw FormatError(.repairJournal, "the journal has no header line", location: .init(file: url.path))
        }
        // Spec 0.5.0's reader took a header without `journal` for format 1.
        let version = headerObject["journal"]?.numberValue?.int64Value ?? 1
        guard version == 1 || version == format else { throw failure(1, "journal format \(version) is not one this version reads") }
        let header = Header(cloudRoot: root, quarantine: headerObject["quarantine"]?.stringValue ?? "", checked: version == format)
        var previous = ""
        var steps: [Step] = []
        var index: [Int: Int] = [:]
        for (offset, line) in lines.enumerated() {
            let number = offset + 1
            guard var record = (try? JSONParser.parse(Array(line)))?.objectValue else { throw failure(number, "not JSON") }
            if header.checked {
                guard let check = record["check"]?.stringValue else { throw failure(number, "no check: the journal was edited") }
                record["check"] = nil
                guard check == Self.check(of: record, after: previous) else {
                    throw failure(number, "its check does not follow from the lines before it: the journal was edited, or lines were removed")
                }
                previous = check
            }
            guard number > 1 else { continue }
            func integer(_ key: String) -> Int? { record[key]?.numberValue?.int64Value.map(Int.init) }
            if let step = integer("step"), let operation = record["op"]?.stringValue {
                guard index[step] == nil else { throw failure(number, "step \(step) is announced twice") }
                switch operation {
                case "move":
                    guard let from = record["from"]?.stringValue, let to = record["to"]?.stringValue, let sha = record["sha256"]?.stringValue,
                        let size = record["size"]?.numberValue?.int64Value
                    else { throw failure(number, "a move without from, to, sha256 or size") }
                    index[step] = steps.count
                    steps.append(Step(number: step, operation: .move(from: from, to: to, sha256: sha, size: size)))
                case "rmdir":
                    guard let path = record["path"]?.stringValue else { throw failure(number, "a folder removal without path") }
                    index[step] = steps.count
                    steps.append(Step(number: step, operation: .removeFolder(path)))
                case "add":
                    guard let from = record["from"]?.stringValue, let to = record["to"]?.stringValue, let sha = record["sha256"]?.stringValue,
                        let size = record["size"]?.numberValue?.int64Value
                    else { throw failure(number, "an addition without from, to, sha256 or size") }
                    index[step] = steps.count
                    steps.append(Step(number: step, operation: .add(from: from, to: to, sha256: sha, size: size)))
                default:
                    throw failure(number, "unknown operation \(operation)")
                }
            } else if let step = integer("done"), let position = index[step] {
                steps[position].done = true
                steps[position].removed = record["removed"] == .bool(true)
            } else if let step = integer("undo"), let position = index[step] {
                steps[position].undoStarted = true
            } else if let step = integer("undone"), let position = index[step] {
                steps[position].undone = true
            } else {
                throw failure(number, "not a journal record")
            }
        }
        return (header, steps, length, previous)
    }

    /// Appends one record and flushes it before anything it announces happens.
    private func append(_ record: JSONObject) throws(FormatError) {
        let (line, check) = checked ? Self.line(record, after: lastCheck) : (Data((JSONWriter().string(.object(record)) + "\n").utf8), "")
        do {
            try handle.write(contentsOf: line)
            try handle.synchronize()
        } catch {
            throw FormatError(.repairJournal, "cannot append to the journal: \(error.localizedDescription)", location: .init(file: journalURL.path))
        }
        lastCheck = check
    }

    private var nextNumber = 1

    /// Where a file of the cloud goes in the quarantine: its path from the cloud root's parent,
    /// below `files/`, so that duplicates of the root keep their own names.
    package func quarantinePath(of file: URL) -> URL {
        let base = cloudRoot.deletingLastPathComponent().path
        let path = file.standardizedFileURL.path
        let relative = Self.below(base, path).map { $0.joined(separator: "/") } ?? file.lastPathComponent
        // In the header's terms: the journal names files in the quarantine where it first was.
        return URL(fileURLWithPath: recordedQuarantine).appendingPathComponent(Self.filesFolder).appendingPathComponent(relative)
    }

    // MARK: Where a path may be

    /// A path a step may name (Spec/repair.md 5.4): below the cloud root or one of its duplicates
    /// `<root> 2` to `<root> 9` (components below the cloud root's parent), or below the
    /// quarantine's `files/` (components below the quarantine folder).
    private enum Place: Equatable {
        case cloud([String])
        case quarantine([String])
    }

    /// The components of `path` below the folder `base`, or nil when it is not below it; by bytes,
    /// so that a folder whose name differs from `base`'s only in Unicode normalisation is another.
    private static func below(_ base: String, _ path: String) -> [String]? {
        guard let rest = ExactString.remainder(of: path, after: base.hasSuffix("/") ? base : base + "/") else { return nil }
        let components = ExactString.components(of: rest)
        guard !components.isEmpty, components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else { return nil }
        return components
    }

    /// The place of `path`, or nil when no repair step may name it.
    private func place(_ path: String) -> Place? {
        if let components = Self.below(recordedQuarantine + "/" + Self.filesFolder, path) { return .quarantine([Self.filesFolder] + components) }
        let name = cloudRoot.lastPathComponent
        if let components = Self.below(cloudRoot.deletingLastPathComponent().path, path), let top = components.first,
            exactlyEqual(top, name) || (2...9).contains(where: { exactlyEqual(top, "\(name) \($0)") })
        {
            return .cloud(components)
        }
        return nil
    }

    /// Refuses a step whose paths no repair writes: every file moves from the cloud to the same
    /// path in the quarantine, or (a fold) within the cloud; every folder removed is in the cloud.
    private func checkPaths(_ step: Step) throws(FormatError) {
        switch step.operation {
        case .move(let from, let to, _, _):
            switch (place(from), place(to)) {
            case (.cloud(let source)?, .quarantine(let target)?) where exactlyEqual(target, [Self.filesFolder] + source): return
            case (.cloud?, .cloud?): return
            default:
                throw FormatError(
                    .repairJournal, "step \(step.number) moves \(from) to \(to), which no repair of \(cloudRoot.path) does: the journal was edited",
                    location: .init(file: journalURL.path))
            }
        case .removeFolder(let path):
            guard case .cloud? = place(path) else {
                throw FormatError(
                    .repairJournal, "step \(step.number) removes \(path), outside \(cloudRoot.path): the journal was edited",
                    location: .init(file: journalURL.path))
            }
        case .add(let from, let to, _, _):
            // Written in the quarantine at the path it takes in the cloud, then moved there.
            guard case .quarantine(let source)? = place(from), case .cloud(let target)? = place(to), exactlyEqual(source, [Self.filesFolder] + target) else {
                throw FormatError(
                    .repairJournal, "step \(step.number) adds \(to) from \(from), which no repair of \(cloudRoot.path) does: the journal was edited",
                    location: .init(file: journalURL.path))
            }
        }
    }

    /// The folder holding `path` and its last name, reached by descriptor from the cloud root's
    /// parent or the quarantine folder; the folder is nil when it does not exist (and is not
    /// created).
    private func locate(_ path: String, creating: Bool) throws(FormatError) -> (folder: DirectoryHandle?, name: String) {
        let (anchor, components): (DirectoryHandle, [String])
        switch place(path) {
        case .cloud(let below)?:
            guard let cloudParent else { throw FormatError(.repairCloudMoved, "the cloud folder is no longer there", location: .init(file: path)) }
            (anchor, components) = (cloudParent, below)
        case .quarantine(let below)?: (anchor, components) = (quarantineFolder, below)
        case nil: throw FormatError(.repairMoveFailed, "outside the cloud folder and the quarantine: never touched", location: .init(file: path))
        }
        return (try anchor.folder(components.dropLast(), creating: creating), components.last ?? "")
    }

    /// Refuses to undo when the quarantine's `files/` holds a file no step accounts for: the
    /// journal was cut or edited, and undo would report success with files left behind
    /// (Spec/repair.md 6).
    private func checkAccounted() throws(FormatError) {
        var expected = Set<ExactString>()
        for step in steps {
            let inQuarantine: String
            switch step.operation {
            case .move(_, let to, _, _): inQuarantine = to
            case .add(let from, _, _, _): inQuarantine = from
            case .removeFolder: continue
            }
            guard case .quarantine(let components)? = place(inQuarantine) else { continue }
            let relative = components.joined(separator: "/")
            expected.insert(ExactString(relative))
            expected.insert(ExactString(relative + Self.partialSuffix + "-\(step.number)"))
            expected.insert(ExactString(Self.aside(relative, step: step.number)))
        }
        var unaccounted: [String] = []
        var pending = [Self.filesFolder]
        while let relative = pending.popLast() {
            let path = quarantine.path + "/" + relative
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                var status = stat()
                guard lstat(path + "/" + name, &status) == 0 else { continue }
                if status.st_mode & S_IFMT == S_IFDIR {
                    pending.append(relative + "/" + name)
                } else if !expected.contains(ExactString(relative + "/" + name)) {
                    unaccounted.append(path + "/" + name)
                }
            }
        }
        guard unaccounted.isEmpty else {
            throw FormatError(
                .repairJournal,
                "the quarantine holds \(unaccounted.count) file(s) its journal does not name (the journal was cut or edited), such as \(unaccounted.sorted(by: utf8Precedes)[0]); nothing was changed",
                location: .init(file: journalURL.path))
        }
    }

    // MARK: Applying

    /// Completes a step that was announced but not marked done (the repair was stopped while
    /// doing it), from what the files say (Spec/repair.md 5.3).
    package func recover() throws(FormatError) {
        for position in steps.indices where !steps[position].done && !steps[position].undone {
            try complete(position)
        }
    }

    private func complete(_ position: Int) throws(FormatError) {
        switch steps[position].operation {
        case .move(let from, let to, let sha, _):
            let outcome = try finishMove(from: from, to: to, sha256: sha, step: steps[position].number, recovering: true, undoing: false)
            try markDone(position, outcome)
        case .add(let from, let to, let sha, _):
            // Written in full (its digest) and not yet moved: the move is made. Cut short, or never
            // written: the step never took effect; the partial file, the repair's own, goes.
            let (staged, stagedName) = try locate(from, creating: false)
            let (target, targetName) = try locate(to, creating: false)
            let isStaged = staged?.status(stagedName) != nil
            let isAdded = target?.status(targetName) != nil
            if !isAdded && (!isStaged || staged?.digest(stagedName)?.sha256 != sha) {
                if isStaged, let staged { _ = unlinkat(staged.descriptor, stagedName, 0) }
                try append(JSONObject([("undone", JSONValue(Int64(steps[position].number)))]))
                steps[position].undone = true
                return
            }
            let outcome = try finishMove(from: from, to: to, sha256: sha, step: steps[position].number, recovering: true, undoing: false)
            try markDone(position, outcome)
        case .removeFolder(let path):
            let (folder, name) = try locate(path, creating: false)
            let removed = folder?.status(name) == nil
            try append(JSONObject([("done", JSONValue(Int64(steps[position].number))), ("removed", .bool(removed))]))
            steps[position].done = true
            steps[position].removed = removed
        }
    }

    /// Journals a finished move; one whose original was replaced while it was copied keeps both
    /// versions and is reported.
    private func markDone(_ position: Int, _ outcome: MoveOutcome) throws(FormatError) {
        try append(JSONObject([("done", JSONValue(Int64(steps[position].number)))]))
        steps[position].done = true
        if case .keptBoth(let from, let to) = outcome {
            throw FormatError(
                .repairSourceChanged,
                "the file was replaced while it was copied into the quarantine: its new version stays in the cloud folder, the version the plan moved is at \(to); the repair stopped",
                location: .init(file: from))
        }
    }

    /// Moves `from` to `to` (never replacing anything), journaled.
    package func move(_ from: URL, to: URL) throws(FormatError) {
        let number = nextNumber
        let step = Step(number: number, operation: .move(from: from.path, to: to.path, sha256: "", size: 0))
        try checkPaths(step)
        let (folder, name) = try locate(from.path, creating: false)
        guard let folder, let (sha, status) = folder.digest(name) else {
            throw FormatError(.repairMoveFailed, "cannot read the file to move", location: .init(file: from.path))
        }
        // Never onto something already there (Spec/repair.md 4): only a stopped step of this
        // repair may find both files, and recovery deals with it.
        let (target, targetName) = try locate(to.path, creating: false)
        guard target?.status(targetName) == nil else {
            throw FormatError(.repairMoveFailed, "something already stands at \(to.path): nothing was moved", location: .init(file: from.path))
        }
        nextNumber += 1
        let size = Int64(status.st_size)
        try append(
            JSONObject([
                ("step", JSONValue(Int64(number))), ("op", .string("move")), ("from", .string(from.path)), ("to", .string(to.path)),
                ("sha256", .string(sha)), ("size", JSONValue(size)),
            ]))
        steps.append(Step(number: number, operation: .move(from: from.path, to: to.path, sha256: sha, size: size)))
        let outcome = try finishMove(from: from.path, to: to.path, sha256: sha, step: number, recovering: false, undoing: false)
        try markDone(steps.count - 1, outcome)
    }

    /// Adds a file the repair wrote to the cloud at `to` (Spec/repair.md 5.1): journaled with its
    /// digest and size, written in full at the path it takes in the cloud below the quarantine's
    /// `files/` and flushed, then moved into the cloud without replacing anything (5.2). A stopped
    /// addition is completed when its file was written in full, and otherwise never took effect.
    package func add(_ bytes: [UInt8], to: URL) throws(FormatError) {
        let number = nextNumber
        let staged = quarantinePath(of: to)
        let sha = lowercaseHex(SHA256.hash(data: bytes))
        let step = Step(number: number, operation: .add(from: staged.path, to: to.path, sha256: sha, size: Int64(bytes.count)))
        try checkPaths(step)
        let (target, targetName) = try locate(to.path, creating: false)
        guard target?.status(targetName) == nil else {
            throw FormatError(.repairMoveFailed, "something already stands at \(to.path): nothing was added", location: .init(file: to.path))
        }
        let (existing, stagedName) = try locate(staged.path, creating: false)
        guard existing?.status(stagedName) == nil else {
            throw FormatError(.repairMoveFailed, "something already stands at \(staged.path): nothing was added", location: .init(file: staged.path))
        }
        nextNumber += 1
        try append(
            JSONObject([
                ("step", JSONValue(Int64(number))), ("op", .string("add")), ("from", .string(staged.path)), ("to", .string(to.path)),
                ("sha256", .string(sha)), ("size", JSONValue(Int64(bytes.count))),
            ]))
        steps.append(step)
        guard let folder = try locate(staged.path, creating: true).folder else {
            throw FormatError(.repairMoveFailed, "cannot create the folder of the file to add", location: .init(file: staged.path))
        }
        let file = openat(folder.descriptor, stagedName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw RepairFiles.failure("cannot write the file to add", staged.path) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Foundation.write(file, $0.baseAddress.map { $0 + written }, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                close(file)
                throw RepairFiles.failure("cannot write the file to add", staged.path)
            }
            written += count
        }
        guard fsync(file) == 0 else {
            close(file)
            throw RepairFiles.failure("cannot flush the file to add", staged.path)
        }
        close(file)
        folder.sync()
        let outcome = try finishMove(from: staged.path, to: to.path, sha256: sha, step: number, recovering: false, undoing: false)
        try markDone(steps.count - 1, outcome)
    }

    /// The files this journal added to the cloud and that are still added (done, not undone).
    package var addedFiles: [URL] {
        steps.compactMap { step in
            guard step.done, !step.undone, case .add(_, let to, _, _) = step.operation else { return nil }
            return URL(fileURLWithPath: to)
        }
    }

    /// How many announced steps a stopped run left undone.
    package var pendingSteps: Int { steps.filter { !$0.done && !$0.undone }.count }

    /// Removes `folder` if it is empty, journaled (a folder that is not empty is kept); whether
    /// it was removed.
    @discardableResult
    package func removeFolderIfEmpty(_ folder: URL) throws(FormatError) -> Bool {
        let number = nextNumber
        let step = Step(number: number, operation: .removeFolder(folder.path))
        try checkPaths(step)
        nextNumber += 1
        try append(JSONObject([("step", JSONValue(Int64(number))), ("op", .string("rmdir")), ("path", .string(folder.path))]))
        steps.append(step)
        let (parent, name) = try locate(folder.path, creating: false)
        let removed = parent.map { unlinkat($0.descriptor, name, AT_REMOVEDIR) == 0 } ?? false
        if removed { parent?.sync() }
        try append(JSONObject([("done", JSONValue(Int64(number))), ("removed", .bool(removed))]))
        steps[steps.count - 1].done = true
        steps[steps.count - 1].removed = removed
        return removed
    }

    /// How a move ended.
    private enum MoveOutcome {
        case moved
        /// The copy was published, but the original's name named another file by then (a sync
        /// service replaced it): both stay.
        case keptBoth(from: String, to: String)
    }

    /// Makes `to` hold the file and `from` not exist, whatever state a stopped move left: the
    /// rename happened, did not, or a copy across file systems stopped part-way. `undoing`: the
    /// move puts a file back into the cloud, where no folder is created and a file found at the
    /// destination is `repair.undo-blocked`.
    private func finishMove(
        from: String, to: String, sha256: String, step: Int, recovering: Bool, undoing: Bool
    ) throws(FormatError)
        -> MoveOutcome
    {
        let blocked: FormatError.Code = undoing ? .repairUndoBlocked : .repairMoveFailed
        let (source, sourceName) = try locate(from, creating: false)
        let (target, targetName) = try locate(to, creating: false)
        let partialName = targetName + Self.partialSuffix + "-\(step)"
        if recovering, let source {
            try settleAside(source, sourceName, step: step, sha256: sha256, copied: target?.digest(targetName)?.sha256 == sha256, from: from)
        }
        switch (source?.status(sourceName) != nil, target?.status(targetName) != nil) {
        case (false, true):
            return .moved
        case (true, true):
            // A copy across file systems that was published but whose original was not yet
            // unlinked: only an identical copy lets the original go.
            guard let source, let target, target.digest(targetName)?.sha256 == sha256, let (sha, status) = source.digest(sourceName), sha == sha256
            else {
                throw FormatError(.repairMoveFailed, "both \(from) and \(to) exist and differ: nothing was changed", location: .init(file: to))
            }
            return try unlinkOriginal(source, sourceName, ifStill: status, step: step, from: from, to: to)
        case (false, false):
            throw FormatError(.repairMoveFailed, "neither \(from) nor \(to) exists: the file was moved by something else", location: .init(file: from))
        case (true, false):
            break
        }
        guard let source else { throw FormatError(.repairMoveFailed, "the file's folder is gone", location: .init(file: from)) }
        // A partial copy of a stopped step is the repair's own, incomplete: the original is still
        // in place. On a fresh step anything at that name belongs to someone else.
        if let target, target.status(partialName) != nil {
            guard recovering else {
                throw FormatError(
                    .repairMoveFailed, "something already stands at \(to)\(Self.partialSuffix)-\(step): nothing was moved", location: .init(file: from))
            }
            _ = unlinkat(target.descriptor, partialName, 0)
        }
        var destination = target
        if destination == nil { destination = try locate(to, creating: !undoing).folder }
        guard let target = destination else {
            throw FormatError(blocked, "the folder \((to as NSString).deletingLastPathComponent) is gone: nothing was moved back", location: .init(file: to))
        }
        if cfs_renameat_noreplace(source.descriptor, sourceName, target.descriptor, targetName) == 0 {
            target.sync()
            source.sync()
            return .moved
        }
        if errno == EEXIST { throw FormatError(blocked, "something now stands at \(to): nothing was moved", location: .init(file: to)) }
        guard errno == EXDEV else { throw RepairFiles.failure("cannot move the file to \(to)", from) }
        return try copyAcross(
            source, sourceName, into: target, targetName, partialName: partialName, step: step, sha256: sha256, blocked: blocked, from: from, to: to)
    }

    /// Another file system: copy from one descriptor of the original into a file that has no name
    /// in the destination folder until it is complete (or, where the file system cannot do that,
    /// `TO.repair-partial-N`), flush, read back and check, publish without replacing, and unlink
    /// the original only while its name still names the file copied (Spec/repair.md 5.2).
    private func copyAcross(
        _ source: DirectoryHandle, _ sourceName: String, into target: DirectoryHandle, _ targetName: String, partialName: String, step: Int, sha256: String,
        blocked: FormatError.Code, from: String, to: String
    ) throws(FormatError) -> MoveOutcome {
        let (input, before) = try source.openRegularFile(sourceName)
        defer { close(input) }
        var named = false
        var output = copiesIntoUnnamedFiles ? cfs_open_unnamed(target.descriptor) : -1
        if output < 0 {
            named = true
            output = openat(target.descriptor, partialName, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            guard output >= 0 else { throw RepairFiles.failure("cannot create the copy", to) }
            TemporaryFiles.register(target.path + "/" + partialName)
        }
        var published = false
        defer {
            close(output)
            if named && !published {
                _ = unlinkat(target.descriptor, partialName, 0)
                TemporaryFiles.unregister(target.path + "/" + partialName)
            }
        }
        do throws(FormatError) {
            var hasher = SHA256()
            try RepairFiles.stream(input) { (chunk) throws(FormatError) in
                hasher.update(data: chunk)
                var written = 0
                while written < chunk.count {
                    let count = chunk.withUnsafeBytes { write(output, $0.baseAddress.map { $0 + written }, $0.count - written) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { throw RepairFiles.failure("cannot write the copy", to) }
                    written += count
                }
            }
            _ = fchmod(output, before.st_mode & 0o777)
            guard fsync(output) == 0 else { throw RepairFiles.failure("cannot flush the copy", to) }
            guard lowercaseHex(hasher.finalize()) == sha256, try RepairFiles.digest(of: output) == sha256 else {
                throw FormatError(
                    .repairSourceChanged, "the file changed since it was planned, or its copy does not read back: nothing was moved",
                    location: .init(file: from))
            }
        } catch {
            throw FormatError(error.code, error.message, location: .init(file: from))
        }
        var after = stat()
        guard fstat(input, &after) == 0, RepairFiles.same(before, after) else {
            throw FormatError(.repairSourceChanged, "the file was written to or replaced while it was copied: nothing was moved", location: .init(file: from))
        }
        try duringCopy?(.copied, from)
        let status =
            named
            ? cfs_renameat_noreplace(target.descriptor, partialName, target.descriptor, targetName) : cfs_link_unnamed(output, target.descriptor, targetName)
        guard status == 0 else {
            if errno == EEXIST { throw FormatError(blocked, "something now stands at \(to): nothing was moved", location: .init(file: to)) }
            throw RepairFiles.failure("cannot publish the copy at \(to)", from)
        }
        published = true
        if named { TemporaryFiles.unregister(target.path + "/" + partialName) }
        target.sync()
        try duringCopy?(.published, from)
        return try unlinkOriginal(source, sourceName, ifStill: after, step: step, from: from, to: to)
    }

    /// Unlinks the original of a published copy only if its name still names the file that was
    /// copied, unchanged; otherwise both stay. The name is first taken by a rename to
    /// `NAME.repair-unlink-STEP` beside it, and only that name is checked and unlinked: a check of
    /// the name followed by an unlink of it lost a download a sync service renamed over it in
    /// between (Spec/repair.md 5.2 rule 4).
    private func unlinkOriginal(
        _ source: DirectoryHandle, _ name: String, ifStill copied: stat, step: Int, from: String, to: String
    ) throws(FormatError)
        -> MoveOutcome
    {
        // Something else moved or removed the original after it was copied: nothing is left to
        // remove, and the copy stands at TO, the end of a move (as recovery finds it, 5.3).
        guard let before = source.status(name) else { return .moved }
        guard RepairFiles.same(before, copied) else { return .keptBoth(from: from, to: to) }
        let aside = Self.aside(name, step: step)
        try duringCopy?(.settingAside, from)
        guard cfs_renameat_noreplace(source.descriptor, name, source.descriptor, aside) == 0 else {
            // Gone since its check, as above, unless something arrived at its name meanwhile.
            if errno == ENOENT { return source.status(name) == nil ? .moved : .keptBoth(from: from, to: to) }
            throw RepairFiles.failure("cannot set the original aside at \(Self.aside(from, step: step)) to remove it", from)
        }
        // The rename set its change time: that was compared just before it.
        guard let now = source.status(aside), RepairFiles.sameRenamed(now, copied) else {
            // A sync service put a new version at the name just before it was taken: it goes back.
            try putBack(source, name, step: step, from: from)
            return .keptBoth(from: from, to: to)
        }
        try duringCopy?(.checked, from)
        guard unlinkat(source.descriptor, aside, 0) == 0 else { throw RepairFiles.failure("cannot remove the original after copying", from) }
        source.sync()
        return .moved
    }

    /// Renames the file set aside by step `step` back to `name` without replacing; where something
    /// stands at `name` again, it stays aside and the error says where.
    private func putBack(_ folder: DirectoryHandle, _ name: String, step: Int, from: String) throws(FormatError) {
        guard cfs_renameat_noreplace(folder.descriptor, Self.aside(name, step: step), folder.descriptor, name) == 0 else {
            throw FormatError(
                .repairSourceChanged, "\(from) was replaced again while it was removed: the version set aside stays at \(Self.aside(from, step: step))",
                location: .init(file: from))
        }
        folder.sync()
    }

    /// A stopped step's original left at its aside name (the step stopped inside rule 4 of
    /// Spec/repair.md 5.2): unlinked when it has the journaled digest and its copy stands at TO
    /// with it, otherwise put back at its name (5.3).
    private func settleAside(_ source: DirectoryHandle, _ name: String, step: Int, sha256: String, copied: Bool, from: String) throws(FormatError) {
        let aside = Self.aside(name, step: step)
        guard source.status(aside) != nil else { return }
        guard copied, source.digest(aside)?.sha256 == sha256 else { return try putBack(source, name, step: step, from: from) }
        guard unlinkat(source.descriptor, aside, 0) == 0 else { throw RepairFiles.failure("cannot remove the original after copying", from) }
        source.sync()
    }

    // MARK: Undo

    /// Moves a step's file from `from` back to `to`, journaled (`undo`, then `undone`); true
    /// when it was moved. A file that cannot go back is refused with its reason and does not keep
    /// the others from going back (Spec/repair.md 6).
    private func undoMove(
        _ step: inout Step, from: String, to: String, sha256: String, undoing: Bool, into result: inout RepairUndoResult, replaced: String
    ) throws(FormatError) -> Bool {
        if !step.undoStarted {
            try append(JSONObject([("undo", JSONValue(Int64(step.number)))]))
            step.undoStarted = true
        }
        do throws(FormatError) {
            let outcome = try finishMove(from: from, to: to, sha256: sha256, step: step.number, recovering: true, undoing: undoing)
            if case .keptBoth = outcome { throw FormatError(.repairSourceChanged, replaced, location: .init(file: from)) }
        } catch {
            result.refused.append(error)
            return false
        }
        try append(JSONObject([("undone", JSONValue(Int64(step.number)))]))
        step.undone = true
        return true
    }

    /// Puts every moved file back where it was, newest step first, and recreates removed
    /// folders; refuses, naming the file, where something now stands at a file's old place
    /// (Spec/repair.md 6). Journaled, so an undo stopped part-way can be run again.
    package func undo() throws(FormatError) -> RepairUndoResult {
        var result = RepairUndoResult()
        // A step a stopped repair left half done is rolled back, not completed: its file need
        // not travel to the quarantine (which may be full) only to come back.
        for position in steps.indices where !steps[position].done && !steps[position].undone {
            do throws(FormatError) {
                try rollBack(position)
            } catch {
                result.refused.append(error)
            }
        }
        for position in steps.indices.reversed() where !steps[position].undone && steps[position].done {
            let number = Int64(steps[position].number)
            switch steps[position].operation {
            case .move(let from, let to, let sha, _):
                let (home, homeName) = try locate(from, creating: false)
                let (moved, movedName) = try locate(to, creating: false)
                // An undo stopped inside rule 4 of 5.2 left the moved file aside (5.3).
                if steps[position].undoStarted, let moved {
                    try settleAside(moved, movedName, step: steps[position].number, sha256: sha, copied: home?.digest(homeName)?.sha256 == sha, from: to)
                }
                let fromExists = home?.status(homeName) != nil
                let toExists = moved?.status(movedName) != nil
                // An undo stopped after the move back: the file is home again.
                if steps[position].undoStarted && fromExists && !toExists {
                    try append(JSONObject([("undone", JSONValue(number))]))
                    steps[position].undone = true
                    result.restored += 1
                    continue
                }
                guard !fromExists || (steps[position].undoStarted && toExists && home?.digest(homeName)?.sha256 == sha) else {
                    result.refused.append(
                        FormatError(.repairUndoBlocked, "something new stands at \(from); the moved file stays at \(to)", location: .init(file: from)))
                    continue
                }
                if try undoMove(
                    &steps[position], from: to, to: from, sha256: sha, undoing: true, into: &result,
                    replaced: "the quarantined file was replaced while it was copied back: both versions stay")
                {
                    result.restored += 1
                }
            case .add(let from, let to, let sha, _):
                // The added file leaves the cloud for the quarantine, and only unchanged: a file
                // that was changed since (a device wrote it, or a user) stays (Spec/repair.md 6).
                let (staged, stagedName) = try locate(from, creating: false)
                let (added, addedName) = try locate(to, creating: false)
                let isStaged = staged?.status(stagedName) != nil
                let isAdded = added?.status(addedName) != nil
                if steps[position].undoStarted && isStaged && !isAdded {
                    try append(JSONObject([("undone", JSONValue(number))]))
                    steps[position].undone = true
                    result.withdrawn += 1
                    continue
                }
                guard isAdded else {
                    result.refused.append(
                        FormatError(.repairMoveFailed, "the file the repair added is no longer at \(to); nothing was changed", location: .init(file: to)))
                    continue
                }
                guard added?.digest(addedName)?.sha256 == sha, !isStaged || staged?.digest(stagedName)?.sha256 == sha else {
                    result.refused.append(
                        FormatError(
                            .repairUndoBlocked, "the file the repair added at \(to) was changed since: it stays in the cloud folder",
                            location: .init(file: to)))
                    continue
                }
                if try undoMove(
                    &steps[position], from: to, to: from, sha256: sha, undoing: false, into: &result,
                    replaced: "the added file was replaced while it was moved out: both versions stay")
                {
                    result.withdrawn += 1
                }
            case .removeFolder(let path):
                if steps[position].removed {
                    let (parent, name) = try locate(path, creating: false)
                    guard let parent, mkdirat(parent.descriptor, name, 0o777) == 0 || errno == EEXIST else {
                        result.refused.append(RepairFiles.failure("cannot recreate the folder", path))
                        continue
                    }
                    parent.sync()
                }
                try append(JSONObject([("undone", JSONValue(number))]))
                steps[position].undone = true
            }
        }
        return result
    }

    /// Undoes a step a stopped repair announced and did not finish, from what the files say: the
    /// file still at home stays (its partial copy, the repair's own, goes); a move that happened
    /// is marked done, for undo to move it back; a published copy whose original was not yet
    /// unlinked is removed when both are identical. An addition is rolled back alike, its home
    /// being the quarantine: one that never reached the cloud stays there, whole or not.
    private func rollBack(_ position: Int) throws(FormatError) {
        let from: String, to: String, sha: String, isAddition: Bool
        switch steps[position].operation {
        case .move(let source, let target, let digest, _): (from, to, sha, isAddition) = (source, target, digest, false)
        case .add(let source, let target, let digest, _): (from, to, sha, isAddition) = (source, target, digest, true)
        default: return try complete(position)
        }
        let number = steps[position].number
        let (home, homeName) = try locate(from, creating: false)
        let (moved, movedName) = try locate(to, creating: false)
        if let moved, moved.status(movedName + Self.partialSuffix + "-\(number)") != nil {
            _ = unlinkat(moved.descriptor, movedName + Self.partialSuffix + "-\(number)", 0)
        }
        // Stopped inside rule 4 of 5.2, forward (the original aside) or rolling back (the copy aside).
        if let home { try settleAside(home, homeName, step: number, sha256: sha, copied: moved?.digest(movedName)?.sha256 == sha, from: from) }
        if let moved { try settleAside(moved, movedName, step: number, sha256: sha, copied: home?.digest(homeName)?.sha256 == sha, from: to) }
        switch (home?.status(homeName) != nil, moved?.status(movedName) != nil) {
        case (true, false):
            break
        case (false, true):
            try append(JSONObject([("done", JSONValue(Int64(number)))]))
            steps[position].done = true
            return
        case (true, true):
            guard let home, let moved, home.digest(homeName)?.sha256 == sha, let (copy, status) = moved.digest(movedName), copy == sha else {
                throw FormatError(.repairMoveFailed, "both \(from) and \(to) exist and differ: nothing was changed", location: .init(file: to))
            }
            guard case .moved = try unlinkOriginal(moved, movedName, ifStill: status, step: number, from: to, to: from) else {
                throw FormatError(.repairSourceChanged, "\(to) changed while it was removed: both stay", location: .init(file: to))
            }
        case (false, false):
            // A staged addition may not have been written yet; a moved file cannot vanish.
            guard isAddition else {
                throw FormatError(.repairMoveFailed, "neither \(from) nor \(to) exists: the file was moved by something else", location: .init(file: from))
            }
        }
        try append(JSONObject([("undone", JSONValue(Int64(number)))]))
        steps[position].undone = true
    }

    /// Whether anything (a link included, not followed) is at `path`.
    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    static func syncFolder(_ path: String) { TemporaryFiles.syncFolder(path) }
}
