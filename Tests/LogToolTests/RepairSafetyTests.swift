import Foundation
import Testing
import Crypto
import JSONDocument
import CloudFolder

/// The repair against a sync service at work and a journal nobody can trust (Spec/repair.md 5.2,
/// 5.4, 6): a file replaced while it is copied across file systems is never lost, and undo
/// touches nothing outside the cloud folder and the quarantine, whatever the journal says or
/// the folders have become.
@Suite("Repair safety")
struct RepairSafetyTests {
    /// A folder on another file system than the temporary folder (the cloud copies live there),
    /// so that moves between them are copies: /dev/shm where it is a separate mount.
    static let otherFileSystem: URL? = {
        var shm = stat(), temporary = stat()
        guard stat("/dev/shm", &shm) == 0, stat(FileManager.default.temporaryDirectory.path, &temporary) == 0, shm.st_dev != temporary.st_dev,
            access("/dev/shm", W_OK) == 0
        else { return nil }
        return URL(fileURLWithPath: "/dev/shm")
    }()

    static func scratch(on base: URL, _ name: String) throws -> URL {
        let folder = base.appendingPathComponent("repair-safety-\(name)-\(UUID().uuidString)").resolvingSymlinksInPath()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    /// A hook for ``RepairJournal/duringCopy`` that stops the step at `stage`, as a crash would.
    static func crash(at stage: RepairJournal.CopyStage) -> (RepairJournal.CopyStage, String) throws(FormatError) -> Void {
        { (now, _) throws(FormatError) in
            if now == stage { throw FormatError(.repairMoveFailed, "stopped here, as by a crash") }
        }
    }

    /// A cloud folder in the temporary folder holding one data file, `E/data/BIG`, and a folder for
    /// quarantines on `quarantinesOn` (another file system, for a move that copies); `remove()`
    /// deletes both.
    struct OneFileCloud {
        let work: URL, quarantines: URL, cloud: URL, data: URL, file: URL
        var quarantine: URL { quarantines.appendingPathComponent("q") }

        init(_ name: String, content: Data, quarantinesOn base: URL) throws {
            work = try RepairSafetyTests.scratch(on: FileManager.default.temporaryDirectory, name)
            quarantines = try RepairSafetyTests.scratch(on: base, name)
            cloud = work.appendingPathComponent("cloud")
            data = cloud.appendingPathComponent("E/data")
            file = data.appendingPathComponent("BIG")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            try content.write(to: file)
        }

        func remove() {
            try? FileManager.default.removeItem(at: work)
            try? FileManager.default.removeItem(at: quarantines)
        }

        /// Starts moving the file into the quarantine (across file systems) and stops the move,
        /// as a crash would, right after the original was set aside and checked; returns where
        /// the copy stands. The journal, and its lock on the quarantine, are gone by then, as a
        /// crashed process's are.
        func moveStoppedAtTheCheck() throws -> URL {
            let journal = try RepairJournal(quarantine: quarantine, cloudRoot: cloud)
            journal.duringCopy = RepairSafetyTests.crash(at: .checked)
            let target = journal.quarantinePath(of: file)
            #expect(throws: FormatError.self) { try journal.move(file, to: target) }
            return target
        }
    }

    @Test(
        "a file replaced by a sync service while it is copied across file systems: both versions kept, 20 runs of 20",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"))
    func replacedWhileCopied() throws {
        let work = try Self.scratch(on: FileManager.default.temporaryDirectory, "race")
        let quarantines = try Self.scratch(on: Self.otherFileSystem!, "race")
        defer {
            try? FileManager.default.removeItem(at: work)
            try? FileManager.default.removeItem(at: quarantines)
        }
        for run in 0..<20 {
            let cloud = work.appendingPathComponent("cloud-\(run)")
            let data = cloud.appendingPathComponent("E/data")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            let file = data.appendingPathComponent("BIG")
            let old = Self.bytes(256 << 10, seed: 1), new = Self.bytes(256 << 10, seed: 2)
            try old.write(to: file)
            let journal = try RepairJournal(quarantine: quarantines.appendingPathComponent("q-\(run)"), cloudRoot: cloud)
            // Half the runs replace the file before the copy is published, half after: either
            // way the old version's copy is published and the new version stays.
            let stage: RepairJournal.CopyStage = run % 2 == 0 ? .copied : .published
            journal.duringCopy = { now, path in
                guard now == stage else { return }
                let download = data.appendingPathComponent(".download")
                try? new.write(to: download)
                _ = rename(download.path, path)
            }
            let target = journal.quarantinePath(of: file)
            #expect(throws: FormatError.self) { try journal.move(file, to: target) }
            do {
                try journal.move(file, to: target)
            } catch {
                // The second attempt meets the first one's outcome: a new original, or a copy at
                // the target; either way it moves nothing.
                #expect([.repairMoveFailed, .repairSourceChanged].contains(error.code))
            }
            #expect(try Data(contentsOf: file) == new, "run \(run): the new version left the cloud folder")
            #expect(try Data(contentsOf: target) == old, "run \(run): the old version is not in the quarantine")
        }
    }

    @Test("a file of several chunks moved into the quarantine: the journal's sha256 is its SHA-256, and every byte arrives", arguments: [false, true])
    func moveOfSeveralChunks(across: Bool) throws {
        guard !across || Self.otherFileSystem != nil else { return }
        let content = Self.bytes((5 << 19) + 7, seed: 9)
        let folders = try OneFileCloud("chunks", content: content, quarantinesOn: across ? Self.otherFileSystem! : FileManager.default.temporaryDirectory)
        defer { folders.remove() }
        let file = folders.file
        let journal = try RepairJournal(quarantine: folders.quarantine, cloudRoot: folders.cloud)
        try journal.move(file, to: journal.quarantinePath(of: file))
        let moved = try Data(contentsOf: journal.quarantinePath(of: file))
        let same = moved == content
        #expect(same, "the quarantined copy has \(moved.count) bytes, the file had \(content.count)")
        // The digest computed here in one piece, not in the journal's chunks.
        let expected = SHA256.hash(data: content).map { String(format: "%02x", $0) }.joined()
        let lines = try String(decoding: Data(contentsOf: folders.quarantine.appendingPathComponent("journal.jsonl")), as: UTF8.self).split(separator: "\n")
        let digests = try lines.compactMap { try JSONParser.parse(Array($0.utf8))[JSONPointer(["sha256"])]?.stringValue }
        #expect(digests == [expected])
    }

    @Test(
        "a download renamed over the original just before or just after it is set aside survives: only the file copied is unlinked",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"), arguments: [RepairJournal.CopyStage.settingAside, .checked])
    func replacedAfterTheCheck(stage replacedAt: RepairJournal.CopyStage) throws {
        let old = Self.bytes(256 << 10, seed: 1), new = Self.bytes(256 << 10, seed: 2)
        let folders = try OneFileCloud("checked", content: old, quarantinesOn: Self.otherFileSystem!)
        defer { folders.remove() }
        let (data, file) = (folders.data, folders.file)
        let journal = try RepairJournal(quarantine: folders.quarantine, cloudRoot: folders.cloud)
        journal.duringCopy = { stage, path in
            guard stage == replacedAt else { return }
            let download = data.appendingPathComponent(".download")
            try? new.write(to: download)
            _ = rename(download.path, path)
        }
        do {
            try journal.move(file, to: journal.quarantinePath(of: file))
            #expect(replacedAt == .checked)
        } catch {
            // Set aside and found to be another file, it went back: both kept, the repair stops.
            #expect(replacedAt == .settingAside && error.code == .repairSourceChanged, "\(error)")
        }
        #expect(try Data(contentsOf: file) == new, "the download renamed over the original was unlinked")
        #expect(try Data(contentsOf: journal.quarantinePath(of: file)) == old)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path) == ["BIG"])
    }

    @Test(
        "a step stopped between setting the original aside and unlinking it is completed, puts back a file that is not the original, or is undone",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"), arguments: [(false, false), (true, false), (false, true)])
    func stoppedWhileSetAside(replaced: Bool, undone: Bool) throws {
        let old = Self.bytes(256 << 10, seed: 1), new = Self.bytes(256 << 10, seed: 2)
        let folders = try OneFileCloud("aside", content: old, quarantinesOn: Self.otherFileSystem!)
        defer { folders.remove() }
        let (cloud, data, file, quarantine) = (folders.cloud, folders.data, folders.file, folders.quarantine)
        let target = try folders.moveStoppedAtTheCheck()
        let aside = data.appendingPathComponent("BIG.repair-unlink-1")
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path) == ["BIG.repair-unlink-1"])
        // The version set aside is not the original when something replaced it there meanwhile.
        if replaced { try new.write(to: aside) }
        let again = try RepairJournal(quarantine: quarantine, cloudRoot: cloud)
        if undone {
            // Undo rolls the stopped step back: the original comes home, nothing stays aside.
            let result = try again.undo()
            #expect(result.refused.isEmpty, "\(result.refused)")
            #expect(try Data(contentsOf: file) == old)
            #expect(try FileManager.default.contentsOfDirectory(atPath: data.path) == ["BIG"])
            return
        }
        if replaced {
            #expect(throws: FormatError.self) { try again.recover() }
            #expect(try Data(contentsOf: file) == new, "the file set aside was not put back")
        } else {
            try again.recover()
            #expect(try FileManager.default.contentsOfDirectory(atPath: data.path) == [])
        }
        #expect(try Data(contentsOf: target) == old)
    }

    @Test(
        "an original that something else removed after its copy was published, before or after its check, is not waited for: the move is done, the copy in the quarantine",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"), arguments: [RepairJournal.CopyStage.published, .settingAside])
    func removedBeforeSetAside(stage removedAt: RepairJournal.CopyStage) throws {
        let old = Self.bytes(256 << 10, seed: 1)
        let folders = try OneFileCloud("removed", content: old, quarantinesOn: Self.otherFileSystem!)
        defer { folders.remove() }
        let journal = try RepairJournal(quarantine: folders.quarantine, cloudRoot: folders.cloud)
        journal.duringCopy = { stage, path in
            if stage == removedAt { _ = unlink(path) }
        }
        let target = journal.quarantinePath(of: folders.file)
        try journal.move(folders.file, to: target)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folders.data.path) == [])
        #expect(try Data(contentsOf: target) == old)
        // Journaled as done: undo brings the file home.
        journal.duringCopy = nil
        let result = try journal.undo()
        #expect(result.restored == 1 && result.refused.isEmpty, "\(result.refused)")
        #expect(try Data(contentsOf: folders.file) == old)
    }

    @Test(
        "an undo whose quarantined file something else removed once its copy was back home finishes: the file is home, nothing refused",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"))
    func quarantinedFileRemovedDuringUndo() throws {
        let old = Self.bytes(256 << 10, seed: 1)
        let folders = try OneFileCloud("undo-removed", content: old, quarantinesOn: Self.otherFileSystem!)
        defer { folders.remove() }
        let journal = try RepairJournal(quarantine: folders.quarantine, cloudRoot: folders.cloud)
        let target = journal.quarantinePath(of: folders.file)
        try journal.move(folders.file, to: target)
        journal.duringCopy = { stage, path in
            if stage == .published { _ = unlink(path) }
        }
        let result = try journal.undo()
        #expect(result.restored == 1 && result.refused.isEmpty, "\(result.refused)")
        #expect(try Data(contentsOf: folders.file) == old)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path) == [])
    }

    @Test(
        "a file set aside that is not the original stays aside when something stands at its name again, and the step stays pending",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"))
    func putBackMeetsAFile() throws {
        let old = Self.bytes(256 << 10, seed: 1), new = Self.bytes(256 << 10, seed: 2), newer = Self.bytes(256 << 10, seed: 3)
        let folders = try OneFileCloud("occupied", content: old, quarantinesOn: Self.otherFileSystem!)
        defer { folders.remove() }
        let (cloud, data, file, quarantine) = (folders.cloud, folders.data, folders.file, folders.quarantine)
        let target = try folders.moveStoppedAtTheCheck()
        // Another version replaced the one set aside, and yet another arrived at its name.
        let aside = data.appendingPathComponent("BIG.repair-unlink-1")
        try new.write(to: aside)
        try newer.write(to: file)
        for _ in 0..<2 {
            // Each recovery tries the put-back again, and nothing is overwritten or unlinked.
            let again = try RepairJournal(quarantine: quarantine, cloudRoot: cloud)
            #expect {
                try again.recover()
            } throws: { error in
                let error = error as? FormatError
                return error?.code == .repairSourceChanged && error?.message.contains("BIG.repair-unlink-1") == true
            }
        }
        #expect(try Data(contentsOf: file) == newer)
        #expect(try Data(contentsOf: aside) == new)
        #expect(try Data(contentsOf: target) == old)
        #expect(try Self.records(quarantine.appendingPathComponent("journal.jsonl")).allSatisfy { $0["done"] == nil })
    }

    @Test(
        "an undo stopped between setting the quarantined copy aside and unlinking it is finished by the next undo, and nothing stays aside",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"))
    func undoStoppedWhileSetAside() throws {
        let old = Self.bytes(256 << 10, seed: 1)
        let folders = try OneFileCloud("undo-aside", content: old, quarantinesOn: Self.otherFileSystem!)
        defer { folders.remove() }
        let (cloud, file, quarantine) = (folders.cloud, folders.file, folders.quarantine)
        let target: URL
        do {
            let journal = try RepairJournal(quarantine: quarantine, cloudRoot: cloud)
            target = journal.quarantinePath(of: file)
            try journal.move(file, to: target)
            journal.duringCopy = Self.crash(at: .checked)
            let stopped = try journal.undo()
            #expect(stopped.restored == 0 && stopped.refused.count == 1)
        }
        let folder = target.deletingLastPathComponent()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["BIG.repair-unlink-1"])
        #expect(try Data(contentsOf: file) == old)
        let result = try RepairJournal(quarantine: quarantine, cloudRoot: cloud).undo()
        #expect(result.restored == 1 && result.refused.isEmpty, "\(result.refused)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
        #expect(try Data(contentsOf: file) == old)
    }

    @Test(
        "a blocked undo across file systems leaves no partial file in the cloud folder and says repair.undo-blocked",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"), arguments: [true, false])
    func blockedUndoAcross(_ unnamed: Bool) throws {
        let folders = try OneFileCloud("blocked", content: Self.bytes(1 << 20, seed: 3), quarantinesOn: Self.otherFileSystem!)
        defer { folders.remove() }
        let (cloud, data, file, quarantine) = (folders.cloud, folders.data, folders.file, folders.quarantine)
        let journal = try RepairJournal(quarantine: quarantine, cloudRoot: cloud)
        journal.copiesIntoUnnamedFiles = unnamed
        try journal.move(file, to: journal.quarantinePath(of: file))
        // Something arrives at the old name while the file is copied back.
        journal.duringCopy = { stage, _ in
            if stage == .copied { try? Data("synced again\n".utf8).write(to: file) }
        }
        let result = try journal.undo()
        #expect(result.restored == 0)
        #expect(result.refused.map(\.code) == [.repairUndoBlocked])
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path) == ["BIG"])
        #expect(try Data(contentsOf: file) == Data("synced again\n".utf8))
        #expect(try Data(contentsOf: journal.quarantinePath(of: file)) == Self.bytes(1 << 20, seed: 3))
    }

    // MARK: Undo that trusts nothing

    /// The check Spec/repair.md 5.1 gives a record after the previous line's check, computed here
    /// from the Spec's words.
    static func check(_ canonical: String, after previous: String) -> String {
        var hasher = SHA256()
        hasher.update(data: Array((previous + canonical).utf8))
        return hasher.finalize().prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The journal's records without their checks, one canonical JSON object per line.
    static func records(_ journal: URL) throws -> [JSONObject] {
        try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").map { line in
            var record = try JSONParser.parse(Array(line.utf8)).objectValue ?? JSONObject()
            record["check"] = nil
            return record
        }
    }

    /// Writes `records` as a journal with a valid chain of checks: what a deliberate editor who
    /// read the Spec writes.
    static func write(_ records: [JSONObject], to journal: URL) throws {
        var previous = ""
        var text = ""
        for record in records {
            let canonical = JSONWriter().string(.object(record))
            previous = check(canonical, after: previous)
            var checked = record
            checked["check"] = .string(previous)
            text += JSONWriter().string(.object(checked)) + "\n"
        }
        try Data(text.utf8).write(to: journal)
    }

    @Test("the journal's checks are the ones the Spec defines")
    func checksAsSpecified() throws {
        let (work, _, quarantine, _) = try RepairTests.repairedCopy("checks")
        defer { try? FileManager.default.removeItem(at: work) }
        let journal = quarantine.appendingPathComponent("journal.jsonl")
        let written = try Data(contentsOf: journal)
        try Self.write(try Self.records(journal), to: journal)
        #expect(try Data(contentsOf: journal) == written)
    }

    /// The step of the repaired fold-and-quarantine copy that moved `data/ORPHAN`.
    static func orphanStep(_ records: [JSONObject]) -> Int? {
        records.firstIndex { $0["from"]?.stringValue?.hasSuffix("/cloud/E/data/ORPHAN") == true }
    }

    @Test(
        "an edited journal is refused: a broken check, or a valid chain naming paths outside the cloud and the quarantine", arguments: [0, 1, 2, 3])
    func editedJournal(_ attack: Int) throws {
        let (work, folder, quarantine, _) = try RepairTests.repairedCopy("edited-\(attack)")
        defer { try? FileManager.default.removeItem(at: work) }
        let journal = quarantine.appendingPathComponent("journal.jsonl")
        let outside = work.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let secret = outside.appendingPathComponent("secret")
        try Data("not the cloud's\n".utf8).write(to: secret)
        var records = try Self.records(journal)
        let step = try #require(Self.orphanStep(records))
        switch attack {
        case 0:
            // Undo would move a file of the machine into the cloud folder; the checks are left.
            var text = try String(contentsOf: journal, encoding: .utf8)
            let to = records[step]["to"]?.stringValue ?? ""
            text = text.replacingOccurrences(of: #""to":"\#(to)""#, with: #""to":"\#(secret.path)""#)
            try Data(text.utf8).write(to: journal)
        case 3:
            // Within the rules of paths, but not what the repair wrote: only the chain tells.
            let text = try String(contentsOf: journal, encoding: .utf8)
            let sha = records[step]["sha256"]?.stringValue ?? ""
            try Data(text.replacingOccurrences(of: sha, with: String(sha.reversed())).utf8).write(to: journal)
        case 1:
            records[step]["to"] = .string(secret.path)
            try Self.write(records, to: journal)
        default:
            // Undo would move a quarantined file to any path.
            records[step]["from"] = .string(outside.appendingPathComponent("planted").path)
            try Self.write(records, to: journal)
        }
        let cloudBefore = RepairTests.snapshot(folder.appendingPathComponent("cloud"))
        let quarantineBefore = RepairTests.snapshot(quarantine)
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 2, "\(undo.stdout)\(undo.stderr)")
        #expect(undo.stderr.contains("repair.journal"), "\(undo.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["secret"])
        #expect(RepairTests.snapshot(folder.appendingPathComponent("cloud")) == cloudBefore)
        #expect(RepairTests.snapshot(quarantine) == quarantineBefore)
    }

    @Test("a journal naming a sibling of the cloud folder whose name differs only in Unicode normalisation is refused", ByteOrderTests.bothNames)
    func normalisationSibling() throws {
        let (work, folder) = try RepairTests.unrepairedCopy("normalisation")
        defer { try? FileManager.default.removeItem(at: work) }
        // The cloud folder renamed "café" in NFC; its sibling "café" in NFD is another folder.
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        try FileManager.default.moveItem(at: folder.appendingPathComponent("cloud"), to: folder.appendingPathComponent(nfc))
        let quarantine = work.appendingPathComponent("q")
        let apply = try Run(arguments: ["repair", "\(nfc)/E", "--apply", "--quarantine", quarantine.path], in: folder)
        #expect(apply.status == 0, "\(apply.stdout)\(apply.stderr)")
        let sibling = folder.appendingPathComponent("\(nfd)/E/data")
        try FileManager.default.createDirectory(at: sibling, withIntermediateDirectories: true)
        // A valid chain whose step moved the orphan from the sibling, and the quarantined file
        // where that step says it is: undo would put it into the sibling.
        let journal = quarantine.appendingPathComponent("journal.jsonl")
        var records = try Self.records(journal)
        let suffix = "/\(nfc)/E/data/ORPHAN"
        let step = try #require(records.firstIndex { $0["from"]?.stringValue?.hasSuffix(suffix) == true })
        for key in ["from", "to"] {
            let path = records[step][key]?.stringValue ?? ""
            records[step][key] = .string(String(path.dropLast(suffix.count)) + "/\(nfd)/E/data/ORPHAN")
        }
        try Self.write(records, to: journal)
        let moved = quarantine.appendingPathComponent("files/\(nfd)/E/data")
        try FileManager.default.createDirectory(at: moved, withIntermediateDirectories: true)
        try FileManager.default.moveItem(
            at: quarantine.appendingPathComponent("files/\(nfc)/E/data/ORPHAN"), to: moved.appendingPathComponent("ORPHAN"))
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 2, "\(undo.stdout)\(undo.stderr)")
        #expect(undo.stderr.contains("repair.journal"), "\(undo.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sibling.path).isEmpty)
    }

    @Test("a quarantine in the cloud folder whose name starts with a combining mark is refused: slash and mark are one character")
    func quarantineAfterCombiningMark() throws {
        let (work, folder) = try RepairTests.unrepairedCopy("combining")
        defer { try? FileManager.default.removeItem(at: work) }
        let before = RepairTests.snapshot(folder.appendingPathComponent("cloud"))
        let run = try Run(arguments: ["repair", "cloud/E", "--apply", "--quarantine", "cloud/\u{301}q"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("repair.quarantine"), "\(run.stdout)\(run.stderr)")
        #expect(RepairTests.snapshot(folder.appendingPathComponent("cloud")) == before)
    }

    @Test("a resumed apply refuses a step that hides `..` behind a slash and a combining mark, one character")
    func hiddenParentStep() throws {
        let (work, folder, quarantine, _) = try RepairTests.repairedCopy("hidden-parent")
        defer { try? FileManager.default.removeItem(at: work) }
        // A file beside the cloud folder, and a valid chain whose last step moves it: the path
        // cloud/../ + U+0301 + x names it through `..`.
        let outside = folder.appendingPathComponent("\u{301}x")
        let bytes = Data("beside the cloud folder\n".utf8)
        try bytes.write(to: outside)
        let journal = quarantine.appendingPathComponent("journal.jsonl")
        var records = try Self.records(journal)
        let step = records.compactMap { $0["step"]?.numberValue?.int64Value }.max() ?? 0
        records.append(
            JSONObject([
                ("from", .string(folder.path + "/cloud/../\u{301}x")), ("op", .string("move")),
                ("sha256", .string(SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())), ("size", JSONValue(Int64(bytes.count))),
                ("step", JSONValue(step + 1)), ("to", .string(quarantine.path + "/files/cloud/../\u{301}x")),
            ]))
        try Self.write(records, to: journal)
        let run = try Run(arguments: ["repair", "cloud/E", "--apply", "--quarantine", quarantine.path], in: folder)
        #expect(run.status == 2 && run.stderr.contains("repair.journal"), "\(run.stdout)\(run.stderr)")
        #expect(try Data(contentsOf: outside) == bytes)
    }

    @Test("a journal cut at a line boundary is refused: the quarantine holds files it no longer names")
    func journalCutBetweenLines() throws {
        let (work, folder, quarantine, _) = try RepairTests.repairedCopy("cut")
        defer { try? FileManager.default.removeItem(at: work) }
        let journal = quarantine.appendingPathComponent("journal.jsonl")
        let lines = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n")
        try Data(lines.prefix(lines.count / 2).map { $0 + "\n" }.joined().utf8).write(to: journal)
        let cloudBefore = RepairTests.snapshot(folder.appendingPathComponent("cloud"))
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 2, "\(undo.stdout)\(undo.stderr)")
        #expect(undo.stderr.contains("repair.journal") && undo.stderr.contains("does not name"), "\(undo.stderr)")
        #expect(RepairTests.snapshot(folder.appendingPathComponent("cloud")) == cloudBefore)
    }

    @Test("undo never follows a cloud subfolder replaced by a link")
    func subfolderReplacedByLink() throws {
        let (work, folder, quarantine, _) = try RepairTests.repairedCopy("link")
        defer { try? FileManager.default.removeItem(at: work) }
        let outside = work.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let data = folder.appendingPathComponent("cloud/E/data")
        try FileManager.default.removeItem(at: data)
        try FileManager.default.createSymbolicLink(at: data, withDestinationURL: outside)
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 1)
        #expect(undo.stderr.contains("a link is never followed"), "\(undo.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        #expect(FileManager.default.fileExists(atPath: quarantine.appendingPathComponent("files/cloud/E/data/ORPHAN").path))
    }

    @Test("undo after the cloud folder moved is refused and re-creates nothing")
    func cloudMoved() throws {
        let (work, folder, quarantine, before) = try RepairTests.repairedCopy("moved")
        defer { try? FileManager.default.removeItem(at: work) }
        let cloud = folder.appendingPathComponent("cloud")
        let elsewhere = folder.appendingPathComponent("cloud-moved")
        try FileManager.default.moveItem(at: cloud, to: elsewhere)
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 1, "\(undo.stdout)\(undo.stderr)")
        #expect(undo.stderr.contains("repair.cloud-moved"), "\(undo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cloud.path))
        // Moved back, the undo goes through.
        try FileManager.default.moveItem(at: elsewhere, to: cloud)
        #expect(try Run(arguments: ["repair", "--undo", quarantine.path], in: folder).status == 0)
        #expect(RepairTests.snapshot(cloud) == before)
    }

    @Test("a quarantine folder moved after the repair is undone from where it now is")
    func quarantineMoved() throws {
        let (work, folder, quarantine, before) = try RepairTests.repairedCopy("qmoved")
        defer { try? FileManager.default.removeItem(at: work) }
        let moved = work.appendingPathComponent("q-moved")
        try FileManager.default.moveItem(at: quarantine, to: moved)
        let undo = try Run(arguments: ["repair", "--undo", moved.path], in: folder)
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(RepairTests.snapshot(folder.appendingPathComponent("cloud")) == before)
    }

    /// Runs logtool through `sh` with a file size limit of `kilobytes` (SIGXFSZ ignored, so that
    /// a write past it fails with EFBIG as on a full disk).
    static func runLimited(_ kilobytes: Int, _ arguments: [String], in folder: URL) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", #"ulimit -f \#(kilobytes * 2); trap '' XFSZ; exec "$@""#, "sh", Run.binary.path] + arguments
        process.currentDirectoryURL = folder
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(
        "a repair stopped by a full quarantine is undone in full, with the quarantine still full",
        .enabled(if: otherFileSystem != nil, "needs /dev/shm on a file system of its own"))
    func quarantineFull() throws {
        let (work, folder, quarantine, _) = try RepairTests.unrepairedCopy("full")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.removeItem(at: quarantine)
        let cloud = folder.appendingPathComponent("cloud")
        // Orphans larger than the limit: the first copy of one fails part-way.
        for index in 0..<3 { try Self.bytes(600 << 10, seed: UInt8(index)).write(to: cloud.appendingPathComponent("E/data/LARGE-\(index)")) }
        let before = RepairTests.snapshot(cloud)
        let elsewhere = try Self.scratch(on: Self.otherFileSystem!, "full")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let target = elsewhere.appendingPathComponent("q")
        #expect(try Self.runLimited(512, ["repair", "cloud/E", "--apply", "--quarantine", target.path], in: folder) == 1)
        #expect(RepairTests.contents([cloud, target]) == before.values.sorted(), "contents lost or duplicated")
        #expect(try Self.runLimited(512, ["repair", "--undo", target.path], in: folder) == 0)
        #expect(RepairTests.snapshot(cloud) == before)
    }

    @Test("an orphan data file inside an iCloud duplicate folder gets one action, and the repair goes through")
    func orphanInDuplicate() throws {
        let (work, folder, quarantine, _) = try RepairTests.unrepairedCopy("dup-orphan")
        defer { try? FileManager.default.removeItem(at: work) }
        let cloud = folder.appendingPathComponent("cloud")
        try FileManager.default.createDirectory(at: cloud.appendingPathComponent("E 2/data"), withIntermediateDirectories: true)
        try Data("orphan of the copy\n".utf8).write(to: cloud.appendingPathComponent("E 2/data/ORPHAN2"))
        let before = RepairTests.snapshot(cloud)
        let plan = try JSONParser.parse(Array(try Run(arguments: ["repair", "cloud/E", "--json"], in: folder).stdout.utf8))
        var named: [String] = []
        for action in plan[JSONPointer(["plan", "actions"])]?.arrayValue ?? [] {
            let moved: [String] = (action.objectValue?["moves"]?.arrayValue ?? []).compactMap { $0.objectValue?["from"]?.stringValue }
            let quarantined: [String] = (action.objectValue?["quarantine"]?.arrayValue ?? []).compactMap(\.stringValue)
            named += (moved + quarantined).filter { $0.hasSuffix("ORPHAN2") }
        }
        #expect(named == [cloud.appendingPathComponent("E 2/data/ORPHAN2").path])
        let applied = try Run(arguments: ["repair", "cloud/E", "--apply", "--quarantine", quarantine.path], in: folder)
        #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(applied.stdout.contains("verify errors: 2 before, 0 after."), "\(applied.stdout)")
        #expect(FileManager.default.fileExists(atPath: quarantine.appendingPathComponent("files/cloud/E 2/data/ORPHAN2").path))
        #expect(try Run(arguments: ["repair", "--undo", quarantine.path], in: folder).status == 0)
        #expect(RepairTests.snapshot(cloud) == before)
    }
}
