import Foundation
import JSONDocument
import CFileSystem
import TemporaryFiles

extension FormatError.Code {
    /// The quarantine folder cannot be used: inside the cloud folder, not empty and not a
    /// quarantine, or a quarantine of another folder (Spec/repair.md 4).
    public static let repairQuarantine = Self("repair.quarantine")
    /// A move or folder removal failed; the journal says how far the repair got (Spec/repair.md 5).
    public static let repairMoveFailed = Self("repair.move-failed")
    /// Undo found something new where a moved file was: it is left in the quarantine
    /// (Spec/repair.md 6).
    public static let repairUndoBlocked = Self("repair.undo-blocked")
    /// The journal cannot be read, or disagrees with the files (Spec/repair.md 5).
    public static let repairJournal = Self("repair.journal")
}

/// The write-ahead journal of a repair (Spec/repair.md 5): every move and folder removal is
/// appended and flushed before it happens and marked done after, so that a repair stopped at any
/// moment, even by SIGKILL or a power cut, can be completed or undone. Nothing it does deletes a
/// file: a file is renamed, or copied, flushed and checked by SHA-256 before its original is
/// unlinked; folders are removed only when empty.
public final class RepairJournal {
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
    }

    public let quarantine: URL
    public let cloudRoot: URL
    private let journalURL: URL
    private var handle: FileHandle
    private(set) var steps: [Step] = []

    /// The journal's file name inside the quarantine folder.
    public static let fileName = "journal.jsonl"
    /// Where moved files go inside the quarantine folder.
    public static let filesFolder = "files"
    /// The suffix of a copy in progress across file systems, followed by `-<step>` (Spec/repair.md 5.2).
    static let partialSuffix = ".repair-partial"

    /// Opens the journal of `quarantine`, creating the folder and the journal for `cloudRoot`
    /// when the folder does not exist or is empty. A folder that holds anything else, or the
    /// journal of another cloud root, is refused; so is a journal another process has open.
    public init(quarantine: URL, cloudRoot: URL) throws(FormatError) {
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
        var (root, steps, length) = try Self.read(journalURL)
        if root == nil {
            // A new journal, or this repair's own whose creation was stopped before its header
            // was whole (a byte prefix of the header written now): no step was ever written, so
            // nothing moved and the header can be written afresh. Anything else is not ours.
            let header = JSONObject([
                ("journal", JSONValue(Int64(1))), ("cloudRoot", .string(self.cloudRoot.path)), ("quarantine", .string(self.quarantine.path)),
            ])
            let line = Data((JSONWriter().string(.object(header)) + "\n").utf8)
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
            (root, steps, length) = (self.cloudRoot.path, [], line.count)
        }
        // Every run: a run stopped before this left the journal's entry unsynced.
        Self.syncFolder(self.quarantine.path)
        guard root == self.cloudRoot.path else {
            throw FormatError(
                .repairQuarantine, "this quarantine belongs to the repair of \(root ?? ""), not of \(self.cloudRoot.path)",
                location: .init(file: quarantine.path))
        }
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
    public static func undo(quarantine: URL) throws(FormatError) -> UndoResult {
        try openForUndo(quarantine)?.undo() ?? UndoResult()
    }

    /// The journal of `quarantine`, opened for undo (the cloud root comes from its header); nil
    /// when it is alone in its folder and cut before its header was whole (no line feed, and the
    /// bytes a header starts with).
    private static func openForUndo(_ quarantine: URL) throws(FormatError) -> RepairJournal? {
        let url = quarantine.standardizedFileURL.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw FormatError(.repairJournal, "no repair journal in this folder", location: .init(file: quarantine.path))
        }
        guard let root = try read(url).root else {
            let found = FileManager.default.contents(atPath: url.path) ?? Data()
            let start = Data(#"{"cloudRoot":""#.utf8)
            let isCutHeader = !found.contains(UInt8(ascii: "\n")) && (found.count <= start.count ? start.starts(with: found) : found.starts(with: start))
            guard isCutHeader, try names(in: quarantine.standardizedFileURL) == [fileName] else {
                throw FormatError(.repairJournal, "the journal has no header line", location: .init(file: url.path))
            }
            return nil
        }
        return try RepairJournal(quarantine: quarantine, cloudRoot: URL(fileURLWithPath: root))
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

    /// The header's cloud root and the steps, with what each record says of them. A last line
    /// cut short by a crash is ignored: it was never flushed as a whole, so its step never began.
    /// The root is nil when not even the header is whole (then there are no steps).
    private static func read(_ url: URL) throws(FormatError) -> (root: String?, steps: [Step], length: Int) {
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
        guard let first = lines.first else { return (nil, [], 0) }
        guard let header = (try? JSONParser.parse(Array(first)))?.objectValue, let root = header["cloudRoot"]?.stringValue else {
            throw FormatError(.repairJournal, "the journal has no header line", location: .init(file: url.path))
        }
        var steps: [Step] = []
        var index: [Int: Int] = [:]
        for (number, line) in lines.dropFirst().enumerated() {
            guard let record = (try? JSONParser.parse(Array(line)))?.objectValue else {
                throw FormatError(.repairJournal, "line \(number + 2) is not JSON", location: .init(file: url.path))
            }
            func integer(_ key: String) -> Int? { record[key]?.numberValue?.int64Value.map(Int.init) }
            if let step = integer("step"), let operation = record["op"]?.stringValue {
                switch operation {
                case "move":
                    guard let from = record["from"]?.stringValue, let to = record["to"]?.stringValue, let sha = record["sha256"]?.stringValue,
                        let size = record["size"]?.numberValue?.int64Value
                    else { throw FormatError(.repairJournal, "line \(number + 2): a move without from, to, sha256 or size", location: .init(file: url.path)) }
                    index[step] = steps.count
                    steps.append(Step(number: step, operation: .move(from: from, to: to, sha256: sha, size: size)))
                case "rmdir":
                    guard let path = record["path"]?.stringValue else {
                        throw FormatError(.repairJournal, "line \(number + 2): a folder removal without path", location: .init(file: url.path))
                    }
                    index[step] = steps.count
                    steps.append(Step(number: step, operation: .removeFolder(path)))
                default:
                    throw FormatError(.repairJournal, "line \(number + 2): unknown operation \(operation)", location: .init(file: url.path))
                }
            } else if let step = integer("done"), let position = index[step] {
                steps[position].done = true
                steps[position].removed = record["removed"] == .bool(true)
            } else if let step = integer("undo"), let position = index[step] {
                steps[position].undoStarted = true
            } else if let step = integer("undone"), let position = index[step] {
                steps[position].undone = true
            } else {
                throw FormatError(.repairJournal, "line \(number + 2) is not a journal record", location: .init(file: url.path))
            }
        }
        return (root, steps, length)
    }

    /// Appends one record and flushes it before anything it announces happens.
    private func append(_ record: JSONObject) throws(FormatError) {
        do {
            try handle.write(contentsOf: Data((JSONWriter().string(.object(record)) + "\n").utf8))
            try handle.synchronize()
        } catch {
            throw FormatError(.repairJournal, "cannot append to the journal: \(error.localizedDescription)", location: .init(file: journalURL.path))
        }
    }

    private var nextNumber = 1

    /// Where a file of the cloud goes in the quarantine: its path from the cloud root's parent,
    /// below `files/`, so that duplicates of the root keep their own names.
    public func quarantinePath(of file: URL) -> URL {
        let base = cloudRoot.deletingLastPathComponent().path
        let path = file.standardizedFileURL.path
        let relative = path.hasPrefix(base + "/") ? String(path.dropFirst(base.count + 1)) : file.lastPathComponent
        return quarantine.appendingPathComponent(Self.filesFolder).appendingPathComponent(relative)
    }

    /// Completes a step that was announced but not marked done (the repair was stopped while
    /// doing it), from what the files say (Spec/repair.md 5.3).
    public func recover() throws(FormatError) {
        if let first = recover(stoppingAtFirst: true).first { throw first }
    }

    /// Completes the stopped steps; a step that cannot be completed is returned and stays
    /// undone (undo then leaves its file where it is).
    private func recover(stoppingAtFirst: Bool) -> [FormatError] {
        var failures: [FormatError] = []
        for position in steps.indices where !steps[position].done {
            do throws(FormatError) {
                try complete(position)
            } catch {
                failures.append(error)
                if stoppingAtFirst { break }
            }
        }
        return failures
    }

    private func complete(_ position: Int) throws(FormatError) {
        switch steps[position].operation {
        case .move(let from, let to, let sha, _):
            try finishMove(from: from, to: to, sha256: sha, step: steps[position].number, recovering: true)
            try append(JSONObject([("done", JSONValue(Int64(steps[position].number)))]))
            steps[position].done = true
        case .removeFolder(let path):
            let removed = !FileManager.default.fileExists(atPath: path)
            try append(JSONObject([("done", JSONValue(Int64(steps[position].number))), ("removed", .bool(removed))]))
            steps[position].done = true
            steps[position].removed = removed
        }
    }

    /// Moves `from` to `to` (never replacing anything), journaled.
    public func move(_ from: URL, to: URL) throws(FormatError) {
        let digest: [UInt8]
        let size: Int64
        do {
            digest = try DataFileReader.digest(of: from)
            size = CloudFolderScanner.fileInfo(atPath: from.path).size ?? 0
        } catch {
            throw FormatError(.repairMoveFailed, "cannot read the file to move: \(error.message)", location: .init(file: from.path))
        }
        let sha = digest.map { String(format: "%02x", $0) }.joined()
        // Never onto something already there (Spec/repair.md 4): only a stopped step of this
        // repair may find both files, and recovery deals with it.
        guard !Self.exists(to.path) else {
            throw FormatError(.repairMoveFailed, "something already stands at \(to.path): nothing was moved", location: .init(file: from.path))
        }
        let number = nextNumber
        nextNumber += 1
        try append(
            JSONObject([
                ("step", JSONValue(Int64(number))), ("op", .string("move")), ("from", .string(from.path)), ("to", .string(to.path)),
                ("sha256", .string(sha)), ("size", JSONValue(size)),
            ]))
        steps.append(Step(number: number, operation: .move(from: from.path, to: to.path, sha256: sha, size: size)))
        try finishMove(from: from.path, to: to.path, sha256: sha, step: number, recovering: false)
        try append(JSONObject([("done", JSONValue(Int64(number)))]))
        steps[steps.count - 1].done = true
    }

    /// How many announced steps a stopped run left undone.
    public var pendingSteps: Int { steps.filter { !$0.done }.count }

    /// Removes `folder` if it is empty, journaled (a folder that is not empty is kept); whether
    /// it was removed.
    @discardableResult
    public func removeFolderIfEmpty(_ folder: URL) throws(FormatError) -> Bool {
        let number = nextNumber
        nextNumber += 1
        try append(JSONObject([("step", JSONValue(Int64(number))), ("op", .string("rmdir")), ("path", .string(folder.path))]))
        steps.append(Step(number: number, operation: .removeFolder(folder.path)))
        let removed = rmdir(folder.path) == 0
        if removed { Self.syncFolder(folder.deletingLastPathComponent().path) }
        try append(JSONObject([("done", JSONValue(Int64(number))), ("removed", .bool(removed))]))
        steps[steps.count - 1].done = true
        steps[steps.count - 1].removed = removed
        return removed
    }

    /// Makes `to` hold the file and `from` not exist, whatever state a stopped move left: the
    /// rename happened, did not, or a copy across file systems stopped part-way.
    private func finishMove(from: String, to: String, sha256: String, step: Int, recovering: Bool) throws(FormatError) {
        let partial = to + Self.partialSuffix + "-\(step)"
        let fromExists = Self.exists(from)
        let toExists = Self.exists(to)
        switch (fromExists, toExists) {
        case (false, true):
            return
        case (true, true):
            // A copy across file systems that was renamed into place but whose original was not
            // yet unlinked: only an identical copy lets the original go.
            guard Self.sha256(of: to) == sha256, Self.sha256(of: from) == sha256 else {
                throw FormatError(.repairMoveFailed, "both \(from) and \(to) exist and differ: nothing was changed", location: .init(file: to))
            }
            guard unlink(from) == 0 else { throw Self.systemError("cannot remove the original after copying", from) }
            Self.syncFolder((from as NSString).deletingLastPathComponent)
            return
        case (false, false):
            throw FormatError(.repairMoveFailed, "neither \(from) nor \(to) exists: the file was moved by something else", location: .init(file: from))
        case (true, false):
            break
        }
        // A partial copy of a stopped step is the repair's own, incomplete: the original is still
        // in place. On a fresh step anything at that name belongs to someone else.
        if Self.exists(partial) {
            guard recovering else {
                throw FormatError(.repairMoveFailed, "something already stands at \(partial): nothing was moved", location: .init(file: from))
            }
            _ = unlink(partial)
        }
        let parent = (to as NSString).deletingLastPathComponent
        do {
            try Self.createFolders(parent)
        } catch {
            throw FormatError(.repairMoveFailed, "cannot create \(parent): \(error.localizedDescription)", location: .init(file: to))
        }
        if cfs_rename_noreplace(from, to) == 0 {
            Self.syncFolder(parent)
            Self.syncFolder((from as NSString).deletingLastPathComponent)
            return
        }
        guard errno == EXDEV else { throw Self.systemError("cannot move the file to \(to)", from) }
        // Another file system: copy, flush, check, publish, and only then unlink the original.
        let copied: [UInt8]
        do {
            copied = try StagingArea.copy(URL(fileURLWithPath: from), to: URL(fileURLWithPath: partial))
        } catch {
            _ = unlink(partial)
            throw FormatError(.repairMoveFailed, "cannot copy to \(to): \(error.errors.first?.message ?? "")", location: .init(file: from))
        }
        guard copied.map({ String(format: "%02x", $0) }).joined() == sha256, Self.sha256(of: partial) == sha256 else {
            _ = unlink(partial)
            throw FormatError(.repairMoveFailed, "the copy at \(to) does not read back as the original: nothing was changed", location: .init(file: from))
        }
        guard cfs_rename_noreplace(partial, to) == 0 else { throw Self.systemError("cannot publish the copy at \(to)", from) }
        Self.syncFolder(parent)
        guard unlink(from) == 0 else { throw Self.systemError("cannot remove the original after copying", from) }
        Self.syncFolder((from as NSString).deletingLastPathComponent)
    }

    /// What undo did: the files put back, and the steps it refused with the reason.
    public struct UndoResult: Sendable {
        public var restored = 0
        public var refused: [FormatError] = []

        public init() {}
    }

    /// Puts every moved file back where it was, newest step first, and recreates removed
    /// folders; refuses, naming the file, where something now stands at a file's old place
    /// (Spec/repair.md 6). Journaled, so an undo stopped part-way can be run again.
    public func undo() throws(FormatError) -> UndoResult {
        var result = UndoResult()
        result.refused = recover(stoppingAtFirst: false)
        for position in steps.indices.reversed() where !steps[position].undone && steps[position].done {
            let number = Int64(steps[position].number)
            switch steps[position].operation {
            case .move(let from, let to, let sha, _):
                let fromExists = Self.exists(from)
                let toExists = Self.exists(to)
                // An undo stopped after the move back: the file is home again.
                if steps[position].undoStarted && fromExists && !toExists {
                    try append(JSONObject([("undone", JSONValue(number))]))
                    steps[position].undone = true
                    result.restored += 1
                    continue
                }
                guard !fromExists || (steps[position].undoStarted && toExists && Self.sha256(of: from) == sha) else {
                    result.refused.append(
                        FormatError(.repairUndoBlocked, "something new stands at \(from); the moved file stays at \(to)", location: .init(file: from)))
                    continue
                }
                if !steps[position].undoStarted {
                    try append(JSONObject([("undo", JSONValue(number))]))
                    steps[position].undoStarted = true
                }
                do throws(FormatError) {
                    try finishMove(from: to, to: from, sha256: sha, step: steps[position].number, recovering: true)
                } catch {
                    // One file that cannot go back does not keep the others from it.
                    result.refused.append(error)
                    continue
                }
                try append(JSONObject([("undone", JSONValue(number))]))
                steps[position].undone = true
                result.restored += 1
            case .removeFolder(let path):
                if steps[position].removed {
                    do {
                        try Self.createFolders(path)
                    } catch {
                        throw FormatError(.repairMoveFailed, "cannot recreate the folder: \(error.localizedDescription)", location: .init(file: path))
                    }
                }
                try append(JSONObject([("undone", JSONValue(number))]))
                steps[position].undone = true
            }
        }
        return result
    }

    /// Whether anything (a link included, not followed) is at `path`.
    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private static func sha256(of path: String) -> String? {
        (try? DataFileReader.digest(of: URL(fileURLWithPath: path)))?.map { String(format: "%02x", $0) }.joined()
    }

    private static func systemError(_ what: String, _ path: String) -> FormatError {
        FormatError(.repairMoveFailed, "\(what): \(String(cString: strerror(errno)))", location: .init(file: path))
    }

    static func syncFolder(_ path: String) { StagingArea.syncFolder(path) }
}
