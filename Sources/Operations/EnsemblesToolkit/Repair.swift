import Foundation
import JSONDocument
import CloudFolder

/// What `logtool repair` proposes for a cloud folder (Spec/repair.md 3): actions that answer
/// verify's findings where the evidence is unambiguous, and notes where only a device, or a new
/// folder, can help. Computing a plan changes nothing.
public struct RepairPlan: Sendable {
    /// One step of the plan.
    public struct Action: Sendable {
        /// `repair.fold-duplicate`, `repair.quarantine-files`, `repair.note`, `repair.recommend`
        /// or `repair.cure-lost`.
        public var code: String
        /// The verify findings it answers: code and files (relative to the ensemble folder).
        public var answers: [(code: String, files: [String])]
        /// What it does, in words.
        public var does: String
        /// What a merge will do afterwards.
        public var afterwards: String
        /// The files it moves: from, to (absolute paths).
        public var moves: [(from: URL, to: URL)] = []
        /// Folders it removes once they are empty (deepest first).
        public var emptiedFolders: [URL] = []
        /// The files it moves into the quarantine (absolute paths).
        public var quarantine: [URL] = []
        /// The files it adds to the cloud folder (absolute paths): a cure's baseline
        /// (Spec/repair.md 3.6), written before anything moves.
        public var adds: [URL] = []
        /// The bytes of each file of ``adds``.
        package var addedBytes: [[UInt8]] = []
        /// For `repair.cure-lost`: what the cure loses against what wiping the cloud folder loses
        /// (`lost`, `dependentEvents`, `dependentObjects`, `withCure`, `withWipe`; Spec/repair.md 3.6).
        public var cure: JSONObject? = nil
    }

    /// The cloud root: the folder whose files the plan may move (Spec/repair.md 2).
    public var cloudRoot: URL
    public var actions: [Action]
    /// verify's errors before the repair, and those the plan leaves (not answered by an action).
    public var errorsBefore: Int
    public var errorsLeft: [(code: String, files: [String])]

    /// Whether there is anything to apply.
    public var hasMoves: Bool {
        actions.contains { !$0.moves.isEmpty || !$0.quarantine.isEmpty || !$0.emptiedFolders.isEmpty || !$0.adds.isEmpty }
    }
}

extension FormatError.Code {
    /// A repair step to fold a duplicate folder back into the ensemble (Spec/repair.md 3.1).
    public static let repairFoldDuplicate = Self("repair.fold-duplicate")
    /// A repair step moving files no device can use into the quarantine (Spec/repair.md 3.2).
    public static let repairQuarantineFiles = Self("repair.quarantine-files")
    /// A finding the repair cannot act on; what a device will do (Spec/repair.md 3.3).
    public static let repairNote = Self("repair.note")
    /// The folder cannot be made mergeable in place (Spec/repair.md 3.4).
    public static let repairRecommend = Self("repair.recommend")
    /// A lost revision cured by a new baseline of the salvage state (Spec/repair.md 3.6).
    public static let repairCureLost = Self("repair.cure-lost")
}

extension Ensemble {
    /// The repair plan for the first input (Spec/repair.md 3), from a verification of it. With
    /// `curingLost`, a lost revision gets the cure of section 3.6 instead of a recommendation;
    /// `devices` (event-data folders of Ensembles 1.x devices) are searched for the lost events,
    /// whose changes the cure then keeps (3.6.6).
    public func repairPlan(curingLost: Bool = false, devices: [String] = []) throws(EnsembleError) -> RepairPlan {
        let path = try firstInput()
        let results = try verify()
        let base = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath()
        // An ensemble folder given directly lives in a root: its parent.
        let isEnsemble = results.count == 1 && results[0].displayPath == "."
        let cloudRoot = isEnsemble ? base.deletingLastPathComponent() : base
        var actions: [RepairPlan.Action] = []
        var errorsLeft: [(code: String, files: [String])] = []
        var errorsBefore = 0
        for result in results {
            let folder = result.displayPath == "." ? base : base.appendingPathComponent(result.displayPath)
            func file(_ relative: String) -> URL { folder.appendingPathComponent(relative).standardizedFileURL }
            // Findings an action clears, and findings a note explains.
            var cleared = Set<Int>()
            func quarantine(_ index: Int, _ diagnostic: Diagnostic, does: String, afterwards: String) {
                cleared.insert(index)
                actions.append(
                    RepairPlan.Action(
                        code: FormatError.Code.repairQuarantineFiles.rawValue, answers: [(diagnostic.code.rawValue, diagnostic.files)], does: does,
                        afterwards: afterwards, quarantine: diagnostic.files.map(file)))
            }
            for (index, diagnostic) in result.diagnostics.enumerated() {
                let files = diagnostic.files
                switch diagnostic.code {
                case .verifyDuplicateFolder:
                    guard let duplicate = files.first else { continue }
                    cleared.insert(index)
                    // Files of the copy that no device can read or use go to the quarantine, not into
                    // the ensemble.
                    let unusable = Set(
                        result.diagnostics.filter { [.verifyUnreadableFile, .verifyOrphanDataFile].contains($0.code) }.flatMap(\.files).map {
                            ExactString(file($0).path)
                        })
                    actions.append(Self.fold(file(duplicate), into: folder, diagnostic, unusable: unusable))
                case .verifyUnreadableFile where files.allSatisfy({ $0.hasPrefix("../") }),
                    .verifyOrphanDataFile where files.allSatisfy({ $0.hasPrefix("../") }):
                    // A file of a duplicate folder: its fold puts it in the quarantine (one action
                    // per file: a second would move it from where the first has moved it).
                    cleared.insert(index)
                case .verifyUnreadableFile where files.allSatisfy({ $0.hasPrefix("events/") || $0.hasPrefix("baselines/") }):
                    quarantine(
                        index, diagnostic, does: "move the unreadable file out of the ensemble", afterwards: "no device tries to import it again")
                case .verifyIncompleteEvent:
                    quarantine(
                        index, diagnostic, does: "move the incomplete (type 0) event out of the ensemble",
                        afterwards: "merges no longer stop on it; devices never integrate type 0 events")
                case .verifyIncompleteMultipart where diagnostic.details["delivery"]?.stringValue == "missing":
                    quarantine(
                        index, diagnostic, does: "move the parts of the multipart event that will not be completed out of the ensemble",
                        afterwards: "merges no longer wait for the missing parts")
                case .verifyDebris
                where ["conflictedCopy", "systemFile"].contains(diagnostic.details["kind"]?.stringValue ?? ""):
                    quarantine(
                        index, diagnostic, does: "move the file a sync service left out of the ensemble", afterwards: "nothing reads it; it no longer syncs")
                case .verifyOrphanDataFile:
                    quarantine(
                        index, diagnostic, does: "move the data file no event references out of the ensemble",
                        afterwards: "nothing reads it; it no longer takes space on every device")
                default:
                    if let note = Self.note(diagnostic, path: path) { actions.append(note) }
                }
            }
            for (index, diagnostic) in result.diagnostics.enumerated() where diagnostic.severity == .error {
                errorsBefore += 1
                if !cleared.contains(index) { errorsLeft.append((diagnostic.code.rawValue, diagnostic.files)) }
            }
        }
        var plan = RepairPlan(cloudRoot: cloudRoot, actions: actions, errorsBefore: errorsBefore, errorsLeft: errorsLeft)
        if curingLost, let result = results.first, results.count == 1 {
            let folder = result.displayPath == "." ? base : base.appendingPathComponent(result.displayPath)
            let inside = result.displayPath == "." ? path : Converter.join(path, result.displayPath)
            try cure(&plan, folder: folder, inside: inside, devices: devices)
        }
        return plan
    }

    /// Findings a cure answers: a gap or missing dependency whose delivery is `missing`
    /// (Spec/repair.md 3.6), and the count of more of them.
    private static let lostCodes: Set<FormatError.Code> = [.verifyRevisionGap, .verifyMissingDependency, .verifyMoreFindings]

    /// Replaces the recommendations for lost revisions with the cure (Spec/repair.md 3.6), or
    /// adds a note saying why there is none. `inside` is the ensemble folder as the input names it.
    private func cure(_ plan: inout RepairPlan, folder: URL, inside: String, devices: [String]) throws(EnsembleError) {
        let cured = [FormatError.Code.verifyRevisionGap, .verifyMissingDependency, .verifySavesBeforeBaseline].map(\.rawValue)
        let recommended = plan.actions.indices.filter {
            plan.actions[$0].code == FormatError.Code.repairRecommend.rawValue && plan.actions[$0].answers.allSatisfy { cured.contains($0.code) }
        }
        // Saves made before the baseline by two or more stores call for a cure even when no
        // revision is lost (Spec/repair.md 3.6.1, 9.3 rule 7).
        let savesBefore = recommended.contains { plan.actions[$0].answers.contains { $0.code == FormatError.Code.verifySavesBeforeBaseline.rawValue } }
        guard !recommended.isEmpty else { return }
        func refuse(_ reason: String) {
            plan.actions.append(
                RepairPlan.Action(
                    code: FormatError.Code.repairNote.rawValue, answers: recommended.flatMap { plan.actions[$0].answers },
                    does: "nothing: --cure-lost cannot cure this folder: \(reason)", afterwards: "the recommendations above stay"))
        }
        // A revision still arriving is not lost: the cure never covers it.
        let lostCodeNames = [FormatError.Code.verifyRevisionGap.rawValue, FormatError.Code.verifyMissingDependency.rawValue]
        guard !plan.actions.contains(where: { $0.code == FormatError.Code.repairNote.rawValue && $0.answers.contains { lostCodeNames.contains($0.code) } })
        else {
            return refuse("a missing revision is still arriving (delivery pending); wait for it")
        }
        // The cure is made from the folder as it is: other moves come first, then a new plan.
        guard !plan.hasMoves else {
            return refuse("apply the other actions first (logtool repair --apply), then plan the cure again")
        }
        let others = plan.errorsLeft.filter { !Self.lostCodes.contains(FormatError.Code($0.code)) }
        guard others.isEmpty else {
            return refuse("other errors stop a merge (\(Set(others.map(\.code)).sorted().joined(separator: ", ")))")
        }
        var warnings: [FormatError] = []
        var (input, analysis) = try analyze(warnings: &warnings)
        var recovery: LostEventRecovery?
        if !devices.isEmpty {
            // The lost events the devices hold join the folder's readable events (3.6.6).
            do {
                let lost = LostRevisionCure.lostRevisions(try analysis.replayedEvents(), analysis.baselineRevisions)
                let found = try LostEventRecovery.recover(lost, from: devices, ensemble: folder.lastPathComponent, cloudData: input.dataFiles)
                if !found.events.isEmpty {
                    guard input.eventStore == nil else {
                        return refuse("the folder's history is too long to recover lost events into the cure in memory")
                    }
                    input.events += found.events.map(\.sourced)
                    input.dataFiles?.formUnion(found.dataFiles.map { ExactString($0.name) })
                    analysis = MergeEngine.analyze(input)
                }
                recovery = found
            } catch {
                throw Self.deviceError(error)
            }
        }
        let prefix = String(Converter.join(inside, "x").dropLast())
        let made: LostRevisionCure
        do {
            made = try LostRevisionCure.make(input, analysis, recovery: recovery, savesBefore: savesBefore) {
                ExactString.remainder(of: $0, after: prefix) ?? $0
            }
        } catch let refusal as LostRevisionCure.Refusal {
            return refuse(refusal.reason)
        } catch {
            return refuse("the salvage state cannot be made: \(error)")
        }
        let answers = recommended.flatMap { plan.actions[$0].answers }
        // By bytes: findings about files named in NFC and NFD are two findings.
        let answered = Set(answers.map { ExactString($0.code + "\u{0}" + $0.files.joined(separator: "\u{0}")) })
        plan.errorsLeft.removeAll {
            answered.contains(ExactString($0.code + "\u{0}" + $0.files.joined(separator: "\u{0}"))) || Self.lostCodes.contains(FormatError.Code($0.code))
        }
        let lost = made.lost.map { "\($0.store) \(IntegrityProblem.revisions($0.first, $0.last))" }.joined(separator: "; ")
        let recovered = (recovery?.events ?? []).map { "\($0.sourced.event.storeIdentifier) \($0.sourced.event.revision)" }.joined(separator: "; ")
        let salvage =
            switch (lost.isEmpty, recovered.isEmpty) {
            case (false, true): "every readable event applied, the lost revisions \(lost) absent"
            case (false, false): "every readable event and the revisions \(recovered) recovered from a device applied, the lost revisions \(lost) absent"
            case (true, false): "every readable event and the revisions \(recovered) recovered from a device applied"
            case (true, true): "every readable event applied"
            }
        var action = RepairPlan.Action(
            code: FormatError.Code.repairCureLost.rawValue, answers: answers,
            does:
                "write a new baseline of the salvage state (\(salvage)) that covers every store's latest revision, then move the \(made.covered.count) event and baseline file(s) it covers out of the ensemble"
                + (lost.isEmpty ? "" : "; this assumes the lost revisions' devices no longer hold them"),
            afterwards: lost.isEmpty
                ? "every device imports the new baseline, deletes what it covers and integrates it in full: no device is held back, and all reach the salvage state; nothing is lost"
                : "every device imports the new baseline, deletes what it covers and integrates it in full: no device is held back, and all reach the salvage state; the changes of the lost revisions are gone (a device that still holds one could rebase instead and keep them)",
            quarantine: made.covered.map { folder.appendingPathComponent($0).standardizedFileURL })
        // Data files first: the baseline must find every file it references (repair.md 9.3 rule 5).
        let data = folder.appendingPathComponent("data")
        action.adds = (recovery?.dataFiles ?? []).map { data.appendingPathComponent($0.name) }
        action.addedBytes = (recovery?.dataFiles ?? []).map(\.bytes)
        action.adds.append(folder.appendingPathComponent("baselines").appendingPathComponent(made.fileName))
        action.addedBytes.append(made.bytes)
        action.cure = made.report
        plan.actions.removeAll {
            $0.code == FormatError.Code.repairRecommend.rawValue
                && Set($0.answers.map { ExactString($0.code + "\u{0}" + $0.files.joined(separator: "\u{0}")) }).isSubset(of: answered)
        }
        plan.actions.append(action)
    }

    /// What a stopped cure still has to move (Spec/repair.md 3.6, 5.3): the files the baseline
    /// it added covers, when that baseline is still in the folder.
    private func cureCompletion(_ added: [URL], cloudRoot: URL) throws(EnsembleError) -> [RepairPlan.Action] {
        let path = try firstInput()
        let base = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath()
        var warnings: [FormatError] = []
        guard let (input, _) = try? analyze(warnings: &warnings), let listing = try? listings().first else { return [] }
        let folder = listing.displayPath == "." ? base : base.appendingPathComponent(listing.displayPath)
        let inside = listing.displayPath == "." ? path : Converter.join(path, listing.displayPath)
        let prefix = String(Converter.join(inside, "x").dropLast())
        let relative = { (file: String) in ExactString.remainder(of: file, after: prefix) ?? file }
        var actions: [RepairPlan.Action] = []
        for file in added {
            guard
                let cure = input.baselines.first(where: {
                    exactlyEqual(folder.appendingPathComponent(relative($0.file)).standardizedFileURL.path, file.standardizedFileURL.path)
                })
            else { continue }
            let covered = LostRevisionCure.coveredBy(cure, input, relative: relative)
            guard !covered.isEmpty else { continue }
            actions.append(
                RepairPlan.Action(
                    code: FormatError.Code.repairCureLost.rawValue, answers: [], does: "finish the cure: move what its baseline covers",
                    afterwards: "", quarantine: covered.map { folder.appendingPathComponent($0).standardizedFileURL }))
        }
        return actions
    }

    /// The fold of one duplicate folder (Spec/repair.md 3.1): the files only it has move into
    /// the ensemble, the rest into the quarantine, and its emptied folders go.
    private static func fold(_ duplicate: URL, into folder: URL, _ diagnostic: Diagnostic, unusable: Set<ExactString>) -> RepairPlan.Action {
        // Paths by their bytes: a copy's file named in NFD is not the ensemble's file named in NFC.
        let copied = Set((diagnostic.details["copied"]?.arrayValue?.compactMap(\.stringValue) ?? []).map(ExactString.init))
        var action = RepairPlan.Action(
            code: FormatError.Code.repairFoldDuplicate.rawValue, answers: [(diagnostic.code.rawValue, diagnostic.files)], does: "",
            afterwards: "every device reads the files it gains from the ensemble; the copy no longer syncs")
        var folders: [URL] = []
        var pending = [duplicate]
        while let next = pending.popLast() {
            folders.append(next)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: next.path)) ?? []).sorted(by: utf8Precedes)
            for name in names {
                let child = next.appendingPathComponent(name)
                var status = stat()
                guard lstat(child.path, &status) == 0 else { continue }
                switch status.st_mode & S_IFMT {
                case S_IFDIR: pending.append(child)
                case S_IFREG:
                    let relative = ExactString.remainder(of: child.path, after: duplicate.path + "/") ?? name
                    if copied.contains(ExactString(relative)) && !unusable.contains(ExactString(child.standardizedFileURL.path)) {
                        action.moves.append((child, folder.appendingPathComponent(relative)))
                    } else {
                        action.quarantine.append(child)
                    }
                // Links and special files stay; their folder then stays too.
                default: continue
                }
            }
        }
        action.does =
            "move the \(action.moves.count) readable file(s) only the copy has into the ensemble, its \(action.quarantine.count) other file(s) into the quarantine, and remove the emptied copy"
        action.emptiedFolders = folders.sorted { $0.path.count > $1.path.count }
        // A duplicate of the root (`Root 2/E`) leaves `Root 2` behind, removed when empty.
        let parent = duplicate.deletingLastPathComponent()
        if parent.path != folder.deletingLastPathComponent().path { action.emptiedFolders.append(parent) }
        return action
    }

    /// What a device will do about a finding no repair in place can clear.
    private static func note(_ diagnostic: Diagnostic, path: String) -> RepairPlan.Action? {
        let details = diagnostic.details
        let store = details["store"]?.stringValue ?? ""
        let pending = details["delivery"]?.stringValue == "pending"
        let answers = [(diagnostic.code.rawValue, diagnostic.files)]
        switch diagnostic.code {
        case .verifyUnregisteredStore:
            return RepairPlan.Action(
                code: FormatError.Code.repairNote.rawValue, answers: answers,
                does: "nothing: a registration is never invented; stores/\(store) can only come from its own device",
                afterwards:
                    "the device of store \(store) leaves the ensemble (205) when it next syncs; other devices integrate what they can (logtool merge --as-store)"
            )
        case .verifyIncompleteMultipart:
            return RepairPlan.Action(
                code: FormatError.Code.repairNote.rawValue, answers: answers, does: "nothing: a part is still arriving",
                afterwards: "merges wait until the sync service delivers it")
        case .verifyRevisionGap, .verifyMissingDependency, .verifyMissingDataFile:
            guard !pending else {
                return RepairPlan.Action(
                    code: FormatError.Code.repairNote.rawValue, answers: answers, does: "nothing: the sync service is still delivering what is missing",
                    afterwards: "the finding clears when it arrives")
            }
            return RepairPlan.Action(
                code: FormatError.Code.repairRecommend.rawValue, answers: answers,
                does: "nothing in place: what is missing is not arriving, so this folder cannot be made mergeable by moving files",
                afterwards:
                    "devices hold back the events that need it (see `logtool merge --as-store STORE \(path)`); once the events that need it are moved out, `logtool rebase \(path) --out NEW` writes a new folder for every device to start from"
            )
        case .verifySavesBeforeBaseline:
            return RepairPlan.Action(
                code: FormatError.Code.repairRecommend.rawValue, answers: answers,
                does: "nothing in place: these saves were made before the baseline and are read after it",
                afterwards:
                    "a device that receives them at different times may apply them in another order than the others and keep other values (Spec/repair.md 9.2); `logtool repair --cure-lost` writes one baseline of them"
            )
        default:
            return nil
        }
    }
}

/// What applying a repair did (Spec/repair.md 4).
public struct RepairResult: Sendable {
    /// Files moved and folders removed by this run, and steps a stopped run left that it completed.
    public var moved = 0
    public var foldersRemoved = 0
    public var recovered = 0
    /// Files added to the cloud folder: a cure's baseline (Spec/repair.md 3.6).
    public var added = 0
}

extension Ensemble {
    /// Carries out the repair plan of the first input (Spec/repair.md 4): first completes what a
    /// stopped run of the same repair left half done, then plans again on the folder as it now is
    /// and moves each file, journaled in `quarantine`. `progress` is called after each step.
    /// With `curingLost`, the plan cures a lost revision (Spec/repair.md 3.6), keeping the lost
    /// events that `devices` still hold (3.6.6).
    public func applyRepair(
        quarantine: URL, curingLost: Bool = false, devices: [String] = [], progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws(EnsembleError) -> RepairResult {
        var plan = try repairPlan(curingLost: curingLost, devices: devices)
        try Self.checkOutside(quarantine, plan)
        let journal: RepairJournal
        do {
            journal = try RepairJournal(quarantine: quarantine, cloudRoot: plan.cloudRoot)
        } catch {
            throw EnsembleError(.usage, error)
        }
        var result = RepairResult()
        do {
            let before = journal.pendingSteps
            try journal.recover()
            result.recovered = before
        } catch {
            throw EnsembleError(.failure, error)
        }
        if result.recovered > 0 || !journal.addedFiles.isEmpty { plan = try repairPlan(curingLost: curingLost) }
        // A cure stopped after its baseline was added: what the baseline covers still moves.
        if !journal.addedFiles.isEmpty { plan.actions += try cureCompletion(journal.addedFiles, cloudRoot: plan.cloudRoot) }
        // Only files of the cloud root and the duplicates beside it may move (Spec/repair.md 2).
        let allowed = plan.cloudRoot.deletingLastPathComponent().path + "/"
        for action in plan.actions {
            for file in action.moves.map(\.from) + action.quarantine + action.adds
            where ExactString.remainder(of: file.standardizedFileURL.path, after: allowed) == nil {
                throw EnsembleError(
                    .failure, FormatError(.repairMoveFailed, "the plan names a file outside the cloud folder", location: .init(file: file.path)))
            }
        }
        let total = plan.actions.reduce(0) { $0 + $1.moves.count + $1.adds.count + $1.quarantine.count + $1.emptiedFolders.count }
        var done = 0
        do throws(FormatError) {
            for action in plan.actions {
                for (from, to) in action.moves {
                    try journal.move(from, to: to)
                    result.moved += 1
                    done += 1
                    progress?(done, total)
                }
                // A cure's baseline is in the folder before anything it covers leaves it.
                for (file, bytes) in zip(action.adds, action.addedBytes) {
                    try journal.add(bytes, to: file)
                    result.added += 1
                    done += 1
                    progress?(done, total)
                }
                for file in action.quarantine {
                    try journal.move(file, to: journal.quarantinePath(of: file))
                    result.moved += 1
                    done += 1
                    progress?(done, total)
                }
                for folder in action.emptiedFolders {
                    if try journal.removeFolderIfEmpty(folder) { result.foldersRemoved += 1 }
                    done += 1
                    progress?(done, total)
                }
            }
        } catch {
            throw EnsembleError(.failure, error)
        }
        return result
    }

    /// The quarantine must not sync: outside the cloud root and every folder the plan touches
    /// (Spec/repair.md 4).
    private static func checkOutside(_ quarantine: URL, _ plan: RepairPlan) throws(EnsembleError) {
        let target = resolved(quarantine)
        var roots = [plan.cloudRoot.resolvingSymlinksInPath().path]
        for action in plan.actions { roots += action.emptiedFolders.map { resolved($0) } }
        // Inside by bytes or by characters: on a file system that ignores normalisation (APFS)
        // the two spellings of a folder are one folder.
        for root in roots {
            let folder = root == "/" ? "/" : root + "/"
            guard target == root || target.hasPrefix(folder) || ExactString.remainder(of: target, after: folder) != nil else { continue }
            throw EnsembleError(
                .usage,
                FormatError(
                    .repairQuarantine, "the quarantine must be outside the cloud folder \(root): a moved file has to stop syncing",
                    location: .init(file: quarantine.path)))
        }
    }

    /// A path with every existing ancestor's links resolved (the path itself may not exist yet).
    private static func resolved(_ url: URL) -> String {
        var existing = url.standardizedFileURL
        var rest: [String] = []
        while !FileManager.default.fileExists(atPath: existing.path) && existing.path != "/" {
            rest.insert(existing.lastPathComponent, at: 0)
            existing = existing.deletingLastPathComponent()
        }
        return rest.reduce(existing.resolvingSymlinksInPath()) { $0.appendingPathComponent($1) }.path
    }
}

extension Ensemble {
    /// Undoes the repair journaled in `quarantine` (Spec/repair.md 6). The journal names the
    /// cloud folder, so no ensemble is needed: a quarantine is all a user may have left.
    public static func undoRepair(quarantine: URL) throws(EnsembleError) -> RepairUndoResult {
        do {
            return try RepairJournal.undo(quarantine: quarantine)
        } catch {
            throw EnsembleError(error.code == .repairJournal ? .usage : .failure, error)
        }
    }
}
