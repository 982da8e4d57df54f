import Foundation
import Testing
import TestSupport
import JSONDocument
import SchemaValidation
import CloudFolder
import LogToolCore

/// `logtool repair` on copies of the broken folders of Fixtures/repair (Spec/repair.md): the
/// plan changes no byte and is the hand-derived one, applying loses and duplicates no file
/// content, and undo restores the folder byte for byte; then the same invariant after SIGKILL
/// at random moments of a long repair.
@Suite("Repair")
struct RepairTests {
    static let root = Run.packageRoot.appendingPathComponent("Fixtures/repair")
    static let cases = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).filter { !$0.hasSuffix(".md") }.sorted()

    /// Every regular file below `folder`: path relative to it -> SHA-256 (hex).
    static func snapshot(_ folder: URL, skipping skipped: Set<String> = []) -> [String: String] {
        var result: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return result }
        while let relative = walker.nextObject() as? String {
            let path = folder.appendingPathComponent(relative).path
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, !skipped.contains(relative) else { continue }
            let digest = (try? DataFileReader.digest(of: URL(fileURLWithPath: path))) ?? []
            result[relative] = digest.map { String(format: "%02x", $0) }.joined()
        }
        return result
    }

    /// The contents of the files of several folders, as a sorted list: equal lists mean no file
    /// content was lost or duplicated, wherever it moved.
    static func contents(_ folders: [URL]) -> [String] {
        folders.flatMap { snapshot($0, skipping: ["journal.jsonl"]).values }.sorted()
    }

    /// Runs logtool with `arguments` in `folder` and SIGKILLs it at a random moment within
    /// `window` seconds; true when the kill landed. A run that ended first narrows the window, so
    /// that later rounds land while the command works.
    static func runKilled(_ arguments: [String], in folder: URL, window: inout Double) throws -> Bool {
        let process = Process()
        process.executableURL = Run.binary
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: Double.random(in: 0..<window))
        defer { process.waitUntilExit() }
        guard process.isRunning else {
            window *= 0.7
            return false
        }
        kill(process.processIdentifier, SIGKILL)
        return true
    }

    static func scratch(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("repair-\(name)-\(UUID().uuidString)")
            .resolvingSymlinksInPath()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A JSON value with every string's `prefix` removed and the members `does` and
    /// `afterwards` dropped (text for people).
    static func normalized(_ value: JSONValue, removing prefix: String) -> JSONValue {
        switch value {
        case .string(let text): return .string(text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text)
        case .array(let items): return .array(items.map { normalized($0, removing: prefix) })
        case .object(let members):
            return .object(
                JSONObject(members.filter { !["does", "afterwards"].contains($0.key) }.map { ($0.key, normalized($0.value, removing: prefix)) }))
        default: return value
        }
    }

    @Test("the repair fixtures are there")
    func casesExist() {
        #expect(Self.cases.count >= 2)
    }

    @Test("plan: no byte changes and the plan is the expected one; apply: as expected, nothing lost; undo: byte for byte", arguments: cases)
    func planApplyUndo(_ name: String) throws {
        let source = Self.root.appendingPathComponent(name)
        let info = try JSONParser.parse(Array(try Data(contentsOf: source.appendingPathComponent("case.json"))))
        let expected = try JSONParser.parse(Array(try Data(contentsOf: source.appendingPathComponent("expected/repair.json"))))
        let after = try JSONParser.parse(Array(try Data(contentsOf: source.appendingPathComponent("expected/after.json"))))
        let work = try Self.scratch(name)
        defer { try? FileManager.default.removeItem(at: work) }
        let folder = work.appendingPathComponent("case")
        try FileManager.default.copyItem(at: source, to: folder)
        let cloud = folder.appendingPathComponent("cloud")
        let before = Self.snapshot(cloud)

        let plan = try Run(arguments: ["repair", "cloud/E", "--json"], in: folder)
        #expect(Int64(plan.status) == info[JSONPointer(["exitCode"])]?.numberValue?.int64Value)
        let document = try JSONParser.parse(Array(plan.stdout.utf8))
        #expect(try BundledSchema.repair.validator().validate(document).isEmpty)
        let differences = ConformanceRunnerAccess.differences(Self.normalized(expected, removing: ""), Self.normalized(document, removing: folder.path + "/"))
        #expect(differences.isEmpty, "\(name):\n\(differences.joined(separator: "\n"))")
        #expect(Self.snapshot(cloud) == before, "the plan changed the folder")

        let quarantine = work.appendingPathComponent("quarantine")
        let applied = try Run(arguments: ["repair", "cloud/E", "--apply", "--quarantine", quarantine.path, "--json"], in: folder)
        #expect(Int64(applied.status) == info[JSONPointer(["applyExitCode"])]?.numberValue?.int64Value, "\(applied.stderr)")
        let result = try JSONParser.parse(Array(applied.stdout.utf8))
        #expect(try BundledSchema.repair.validator().validate(result).isEmpty)
        #expect(result[JSONPointer(["applied", "errorsAfter"])] == after[JSONPointer(["errorsAfter"])])
        #expect(result[JSONPointer(["applied", "newErrors"])] == .array([]))
        let cloudFiles = Self.snapshot(cloud).keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(.array(cloudFiles.map(JSONValue.string)) == after[JSONPointer(["cloud"])])
        let moved = Self.snapshot(quarantine, skipping: ["journal.jsonl"]).keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(.array(moved.map(JSONValue.string)) == after[JSONPointer(["quarantine"])])
        #expect(Self.contents([cloud, quarantine]) == before.values.sorted(), "file contents were lost or duplicated")

        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(Self.snapshot(cloud) == before, "undo did not restore the folder byte for byte")
    }

    @Test("a quarantine inside the cloud folder is refused and nothing moves")
    func quarantineInside() throws {
        let work = try Self.scratch("inside")
        defer { try? FileManager.default.removeItem(at: work) }
        let folder = work.appendingPathComponent("case")
        try FileManager.default.copyItem(at: Self.root.appendingPathComponent("fold-and-quarantine"), to: folder)
        let before = Self.snapshot(folder)
        let run = try Run(arguments: ["repair", "cloud/E", "--apply", "--quarantine", "cloud/Q"], in: folder)
        #expect(run.status == 2)
        #expect(run.stderr.contains("repair.quarantine"))
        #expect(Self.snapshot(folder) == before)
    }

    /// A copy of the fold-and-quarantine fixture as `case` in a scratch folder: the scratch
    /// folder (to remove) and the case folder.
    static func unrepairedCopy(_ name: String) throws -> (work: URL, folder: URL) {
        let work = try scratch(name)
        let folder = work.appendingPathComponent("case")
        try FileManager.default.copyItem(at: root.appendingPathComponent("fold-and-quarantine"), to: folder)
        return (work, folder)
    }

    /// A copy of the fold-and-quarantine fixture in a scratch folder, repaired into `q` beside it:
    /// the scratch folder (to remove), the case folder, the quarantine, and the cloud folder's
    /// files before the repair.
    static func repairedCopy(_ name: String) throws -> (work: URL, folder: URL, quarantine: URL, before: [String: String]) {
        let (work, folder) = try unrepairedCopy(name)
        let before = snapshot(folder.appendingPathComponent("cloud"))
        let quarantine = work.appendingPathComponent("q")
        _ = try Run(arguments: ["repair", "cloud/E", "--apply", "--quarantine", quarantine.path], in: folder)
        return (work, folder, quarantine, before)
    }

    @Test("undo refuses, naming the file, where something new stands at a moved file's place")
    func undoBlocked() throws {
        let (work, folder, quarantine, _) = try Self.repairedCopy("blocked")
        defer { try? FileManager.default.removeItem(at: work) }
        let orphan = folder.appendingPathComponent("cloud/E/data/ORPHAN")
        try Data("a new file with the old name\n".utf8).write(to: orphan)
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 1)
        #expect(undo.stderr.contains("repair.undo-blocked \(orphan.path): "))
        #expect(try String(contentsOf: orphan, encoding: .utf8) == "a new file with the old name\n")
        #expect(FileManager.default.fileExists(atPath: quarantine.appendingPathComponent("files/cloud/E/data/ORPHAN").path))
    }

    @Test("a journal line cut by a crash is cut off: the next run appends after it and stays readable")
    func tornJournalLine() throws {
        let (work, folder, quarantine, before) = try Self.repairedCopy("torn")
        defer { try? FileManager.default.removeItem(at: work) }
        let journal = quarantine.appendingPathComponent("journal.jsonl")
        var bytes = try Data(contentsOf: journal)
        bytes.removeLast(6)  // the end of the last record, `"done":N}` and its line feed
        try bytes.write(to: journal)
        #expect(try Run(arguments: ["repair", "--undo", quarantine.path], in: folder).status == 0)
        let again = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Self.snapshot(folder.appendingPathComponent("cloud")) == before)
    }

    /// A copy of the fold-and-quarantine fixture and an empty quarantine folder beside it: the
    /// scratch folder (to remove), the case folder, the quarantine and the cloud's files.
    static func unrepairedCopy(_ name: String) throws -> (work: URL, folder: URL, quarantine: URL, before: [String: String]) {
        let work = try scratch(name)
        let folder = work.appendingPathComponent("case")
        try FileManager.default.copyItem(at: root.appendingPathComponent("fold-and-quarantine"), to: folder)
        let quarantine = work.appendingPathComponent("q")
        try FileManager.default.createDirectory(at: quarantine, withIntermediateDirectories: false)
        return (work, folder, quarantine, snapshot(folder.appendingPathComponent("cloud")))
    }

    /// The header line Spec/repair.md 5.1 gives for a repair of `cloud` into `quarantine`.
    static func header(cloud: URL, quarantine: URL) -> String {
        let record = #"{"cloudRoot":"\#(cloud.path)","journal":2,"quarantine":"\#(quarantine.path)"}"#
        let check = RepairSafetyTests.check(record, after: "")
        return #"{"check":"\#(check)","cloudRoot":"\#(cloud.path)","journal":2,"quarantine":"\#(quarantine.path)"}"# + "\n"
    }

    /// Runs logtool with `arguments` in `folder` and expects it to end with `status`, naming
    /// `reason` on standard error.
    static func expectRefusal(
        _ arguments: [String], in folder: URL, status: Int32, reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let run = try Run(arguments: arguments, in: folder)
        #expect(run.status == status, sourceLocation: sourceLocation)
        #expect(run.stderr.contains(reason), "\(run.stderr)", sourceLocation: sourceLocation)
    }

    @Test(
        "a journal cut before its header was whole: undo has nothing to put back, apply writes the header and repairs",
        arguments: [0, 1, 14, 40, -1])
    func cutJournalHeader(_ length: Int) throws {
        let (work, folder, quarantine, before) = try Self.unrepairedCopy("header")
        defer { try? FileManager.default.removeItem(at: work) }
        let cloud = folder.appendingPathComponent("cloud")
        let header = Self.header(cloud: cloud, quarantine: quarantine)
        let journal = quarantine.appendingPathComponent("journal.jsonl")
        // -1: the whole line but its line feed.
        try Data(header.utf8.prefix(length < 0 ? header.utf8.count - 1 : length)).write(to: journal)
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(undo.stdout.contains("Put back 0 file(s)"), "\(undo.stdout)")
        let applied = try Run(arguments: ["repair", "cloud/E", "--apply", "--quarantine", quarantine.path], in: folder)
        #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(try String(contentsOf: journal, encoding: .utf8).hasPrefix(header))
        #expect(Self.contents([cloud, quarantine]) == before.values.sorted())
        #expect(try Run(arguments: ["repair", "--undo", quarantine.path], in: folder).status == 0)
        #expect(Self.snapshot(cloud) == before)
    }

    @Test(
        "a journal.jsonl that is no cut header of this repair is left as it is, by apply and by undo",
        arguments: [
            (#"{"cloudRoot":"/elsewhere/clo"#, 0), (#"{"note":"my own"}"#, 2), ("my notes\n", 2), (#"{"cloudRoot":"/x"}"# + "\n", 0),
        ])
    func foreignJournal(_ text: String, undoStatus: Int32) throws {
        let (work, folder, quarantine, before) = try Self.unrepairedCopy("foreign")
        defer { try? FileManager.default.removeItem(at: work) }
        let journal = quarantine.appendingPathComponent("journal.jsonl")
        try Data(text.utf8).write(to: journal)
        try Self.expectRefusal(["repair", "cloud/E", "--apply", "--quarantine", quarantine.path], in: folder, status: 2, reason: "repair.quarantine")
        // A header of another repair's, cut or whole but without steps, moved nothing: undo has
        // nothing to put back.
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == undoStatus, "\(undo.stderr)")
        #expect(try Data(contentsOf: journal) == Data(text.utf8))
        #expect(Self.snapshot(folder.appendingPathComponent("cloud")) == before)
    }

    @Test("a journal without its header beside other files is not taken for a fresh one, by apply or by undo")
    func headerlessJournalWithFiles() throws {
        let (work, folder, quarantine, _) = try Self.repairedCopy("headerless")
        defer { try? FileManager.default.removeItem(at: work) }
        try Data().write(to: quarantine.appendingPathComponent("journal.jsonl"))
        let moved = Self.snapshot(quarantine)
        try Self.expectRefusal(["repair", "cloud/E", "--apply", "--quarantine", quarantine.path], in: folder, status: 2, reason: "repair.quarantine")
        try Self.expectRefusal(["repair", "--undo", quarantine.path], in: folder, status: 2, reason: "repair.journal")
        #expect(Self.snapshot(quarantine) == moved)
    }

    @Test("a quarantine whose journal another process holds is refused, and nothing moves")
    func journalInUse() throws {
        let (work, folder, quarantine, before) = try Self.repairedCopy("locked")
        defer { try? FileManager.default.removeItem(at: work) }
        let cloud = folder.appendingPathComponent("cloud")
        let after = Self.snapshot(cloud)
        let descriptor = open(quarantine.appendingPathComponent("journal.jsonl").path, O_RDONLY)
        #expect(descriptor >= 0 && flock(descriptor, LOCK_EX) == 0)
        let inUse = "another repair or undo is using this quarantine"
        try Self.expectRefusal(["repair", "--undo", quarantine.path], in: folder, status: 1, reason: inUse)
        try Self.expectRefusal(["repair", "cloud/E", "--apply", "--quarantine", quarantine.path], in: folder, status: 2, reason: inUse)
        #expect(Self.snapshot(cloud) == after)
        close(descriptor)
        #expect(try Run(arguments: ["repair", "--undo", quarantine.path], in: folder).status == 0)
        #expect(Self.snapshot(cloud) == before)
    }

    @Test("undo puts back every file it can when one quarantined file is gone, and names that one")
    func undoGoesOn() throws {
        let (work, folder, quarantine, _) = try Self.repairedCopy("missing")
        defer { try? FileManager.default.removeItem(at: work) }
        let lost = quarantine.appendingPathComponent("files/cloud/E/data/ORPHAN")
        try FileManager.default.removeItem(at: lost)
        let undo = try Run(arguments: ["repair", "--undo", quarantine.path], in: folder)
        #expect(undo.status == 1)
        #expect(undo.stdout.contains("Put back 6 file(s)"), "\(undo.stdout)")
        #expect(undo.stderr.contains("repair.move-failed"))
    }

    /// A folder with many files to move: orphan data files and conflicted copies.
    static func largeFolder(at cloud: URL, files: Int) throws {
        let ensemble = cloud.appendingPathComponent("E")
        let source = root.appendingPathComponent("fold-and-quarantine/cloud/E")
        for folder in ["stores", "events", "data"] {
            try FileManager.default.createDirectory(at: ensemble.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        for name in ["stores/STORE-AA", "stores/STORE-BB", "events/1_STORE-AA_0.cdeevent", "events/2_STORE-AA_1.cdeevent", "events/3_STORE-BB_0.cdeevent"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: ensemble.appendingPathComponent(name))
        }
        for index in 0..<files {
            let name = index % 5 == 0 ? "events/2_STORE-AA_1 (conflicted copy \(index)).cdeevent" : "data/ORPHAN-\(index)"
            try Data("file \(index) \(String(repeating: "x", count: index % 97))\n".utf8).write(to: ensemble.appendingPathComponent(name))
        }
    }

    @Test("SIGKILL at 10 random moments (20 in the long run) during --apply, then --apply or --undo: no file lost or duplicated")
    func killed() throws {
        let kills = LongRun.count(10, long: 20)
        let files = Int(ProcessInfo.processInfo.environment["LOGTOOL_REPAIR_KILL_FILES"] ?? "") ?? 300
        let work = try Self.scratch("kill")
        defer { try? FileManager.default.removeItem(at: work) }
        let pristine = work.appendingPathComponent("pristine")
        try Self.largeFolder(at: pristine, files: files)
        let original = Self.snapshot(pristine)
        // How long a whole repair takes, to spread the kills over it.
        let timing = work.appendingPathComponent("timing")
        try FileManager.default.copyItem(at: pristine, to: timing)
        let start = Date()
        let full = try Run(arguments: ["repair", "E", "--apply", "--quarantine", work.appendingPathComponent("timing-q").path], in: timing)
        let duration = Date().timeIntervalSince(start)
        #expect(full.status == 0, "\(full.stdout)\(full.stderr)")
        var interrupted = 0
        var round = 0
        // The kills are spread over the measured time; a kill that comes after the repair ended
        // narrows the window, since a loaded machine's timing run may have been slow.
        var window = duration * 0.9
        // Rounds go on until every kill has landed while a repair ran (at most 80 rounds).
        while interrupted < kills && round < 80 {
            defer { round += 1 }
            let cloud = work.appendingPathComponent("round-\(round)")
            let quarantine = work.appendingPathComponent("round-\(round)-q")
            try FileManager.default.copyItem(at: pristine, to: cloud)
            if try Self.runKilled(["repair", "E", "--apply", "--quarantine", quarantine.path], in: cloud, window: &window) { interrupted += 1 }
            #expect(Self.contents([cloud, quarantine]) == original.values.sorted(), "round \(round): contents lost or duplicated after the kill")
            if round % 2 == 0 {
                let resumed = try Run(arguments: ["repair", "E", "--apply", "--quarantine", quarantine.path], in: cloud)
                #expect(resumed.status == 0, "round \(round): \(resumed.stdout)\(resumed.stderr)")
                #expect(Self.contents([cloud, quarantine]) == original.values.sorted(), "round \(round): contents lost or duplicated after completing")
                #expect(Self.snapshot(cloud).count == original.count - files, "round \(round): not every file was moved")
            } else {
                let undone = try Run(arguments: ["repair", "--undo", quarantine.path], in: cloud)
                if FileManager.default.fileExists(atPath: quarantine.appendingPathComponent("journal.jsonl").path) {
                    #expect(undone.status == 0, "round \(round): \(undone.stderr)")
                }
                #expect(Self.snapshot(cloud) == original, "round \(round): undo did not restore the folder byte for byte")
            }
        }
        #expect(interrupted >= kills, "only \(interrupted) kills in \(round) rounds interrupted a repair")
    }
}

/// The conformance runner's JSON comparison, for tests outside it.
enum ConformanceRunnerAccess {
    static func differences(_ want: JSONValue, _ got: JSONValue) -> [String] {
        ConformanceRunner.jsonDifferences(want, got, at: JSONPointer([]), limit: 20)
    }
}
