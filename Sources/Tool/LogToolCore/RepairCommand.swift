import ArgumentParser
import Foundation
import EnsemblesToolkit
import RemoteFolder

/// `logtool repair`: a plan for what verify finds, applied only on request, journaled and
/// undoable (Spec/repair.md).
struct Repair: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Plan, apply or undo the repair of a cloud folder; nothing is ever deleted (Spec/repair.md).",
        discussion: """
            Without --apply, prints the plan and changes nothing. With --apply, moves files into the \
            quarantine folder DIR (outside the cloud folder) with a journal, then verifies again and \
            prints what changed. --undo DIR puts every moved file back. Exit status: 0 nothing left to \
            repair (or all restored), 1 errors remain or a step was refused, 2 usage error.

            Examples:
              logtool repair cloud/MainStore
              logtool repair cloud/MainStore --apply --quarantine ~/ensembles-quarantine
              logtool repair --undo ~/ensembles-quarantine
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup var options: ReadingOptions

    @Flag(name: .long, help: "Carry the plan out (needs --quarantine).")
    var apply = false

    @Option(name: .long, help: ArgumentHelp("Where moved files go: a new or empty folder outside the cloud folder.", valueName: "DIR"))
    var quarantine: String?

    @Flag(
        name: .long,
        help:
            "Cure a lost revision: a new baseline of the salvage state covering every store, and what it covers moved to the quarantine (needs --model)."
    )
    var cureLost = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --cure-lost: an Ensembles 1.x device's event-data folder that may still hold a lost event; its changes then go into the cure (repeatable).",
            valueName: "DEVICE-DIR"))
    var device: [String] = []

    @Option(name: .long, help: ArgumentHelp("Put back every file the repair journaled in DIR moved.", valueName: "DIR"))
    var undo: String?

    @Flag(name: .long, help: "Print the plan (and what applying it did) as JSON.")
    var json = false

    @OptionGroup(title: "Remote Folder Options") var remote: RemoteOptions

    @Argument(help: "The cloud folder: an ensemble folder or a root, or its URL for the plan alone (Spec/remote.md 5.2).", completion: .directory)
    var path: String?

    func validate() throws {
        try options.validateModelVersion()
        if undo != nil {
            guard !apply && !cureLost && quarantine == nil && path == nil && device.isEmpty else {
                throw ValidationError("--undo DIR takes no PATH, --apply, --cure-lost, --device or --quarantine")
            }
            return
        }
        guard path != nil else { throw ValidationError("give the cloud folder PATH") }
        if !device.isEmpty && !cureLost { throw ValidationError("--device is for --cure-lost") }
        if apply && quarantine == nil { throw ValidationError("--apply needs --quarantine DIR") }
        if !apply && quarantine != nil { throw ValidationError("--quarantine is for --apply") }
    }

    func run() throws {
        if let undo { return try runUndo(URL(fileURLWithPath: undo)) }
        guard let argument = path else { throw ToolExit(status: .usage) }
        if apply, RemoteLocation.isRemote(argument) {
            writeErrors(
                [
                    FormatError(
                        .remoteReadOnly,
                        "repair --apply does not write to a remote folder: fetch it (logtool fetch URL DIR), repair the copy, and upload the changed files with the server's own tools",
                        location: .init(file: "URL"))
                ], json: json)
            throw ToolExit(status: .usage)
        }
        // A URL is read from a private snapshot (Spec/remote.md 5.1): the plan only.
        let (paths, temporary) = try RemoteInputs.localize([argument], remote, json: json)
        defer { RemoteInputs.remove(temporary) }
        let path = paths[0]
        let ensemble = Ensemble(inputs: [path], options: try options.ensembleOptions(json: json))
        let plan: RepairPlan
        do {
            plan = try ensemble.repairPlan(curingLost: cureLost, devices: device)
        } catch {
            throw reportAndExit(error, json: json)
        }
        guard apply, let quarantine else {
            if json {
                writeJSON(.object(JSONObject([("plan", Self.document(plan)), ("applied", .null)])))
            } else {
                writeStandardOutput(Self.text(plan, path: path))
            }
            throw ToolExit(status: plan.errorsBefore == 0 && !plan.hasMoves ? .success : .problemsFound)
        }
        let progress = isatty(STDERR_FILENO) == 1
        let result: RepairResult
        do {
            result = try ensemble.applyRepair(quarantine: URL(fileURLWithPath: quarantine), curingLost: cureLost, devices: device) { done, total in
                if progress { Console.err(Data("\rrepairing: \(done) of \(total) steps…".utf8)) }
            }
        } catch {
            if progress { Console.err(Data("\r\u{1B}[K".utf8)) }
            throw reportAndExit(error, json: json)
        }
        if progress { Console.err(Data("\r\u{1B}[K".utf8)) }
        let after: [EnsembleVerification]
        do {
            after = try ensemble.verify()
        } catch {
            throw reportAndExit(error, json: json)
        }
        let errorsAfter = after.flatMap(\.diagnostics).filter { $0.severity == .error }.map { ($0.code.rawValue, $0.files) }
        let key = { (finding: (String, [String])) in finding.0 + " " + finding.1.joined(separator: ", ") }
        let before = Set(plan.errorsLeft.map { ExactString(key($0)) })
        let new = errorsAfter.map(key).filter { !before.contains(ExactString($0)) }.sorted(by: utf8Precedes)
        if json {
            writeJSON(
                .object(
                    JSONObject([
                        ("plan", Self.document(plan)),
                        (
                            "applied",
                            .object(
                                JSONObject([
                                    ("quarantine", .string(URL(fileURLWithPath: quarantine).standardizedFileURL.path)),
                                    ("moved", JSONValue(Int64(result.moved))), ("added", JSONValue(Int64(result.added))),
                                    ("foldersRemoved", JSONValue(Int64(result.foldersRemoved))),
                                    ("recovered", JSONValue(Int64(result.recovered))), ("errorsAfter", JSONValue(Int64(errorsAfter.count))),
                                    ("newErrors", .array(new.map(JSONValue.string))),
                                ]))
                        ),
                    ])))
        } else {
            var text = Self.text(plan, path: path, applied: true)
            if result.recovered > 0 { text += "Completed \(result.recovered) step(s) a stopped repair had begun.\n" }
            if result.added > 0 { text += "Added \(result.added) file(s) to the cloud folder.\n" }
            text += "Moved \(result.moved) file(s) into \(escaped(quarantine)), removed \(result.foldersRemoved) empty folder(s).\n"
            text += "verify errors: \(plan.errorsBefore) before, \(errorsAfter.count) after.\n"
            for finding in new { text += "  new: \(escaped(finding))\n" }
            text += "Undo with: logtool repair --undo \(escaped(quarantine))\n"
            writeStandardOutput(text)
        }
        throw ToolExit(status: errorsAfter.isEmpty ? .success : .problemsFound)
    }

    private func runUndo(_ quarantine: URL) throws {
        let result: RepairUndoResult
        do {
            result = try Ensemble.undoRepair(quarantine: quarantine)
        } catch {
            throw reportAndExit(error, json: json)
        }
        if json {
            writeJSON(
                .object(
                    JSONObject([
                        ("restored", JSONValue(Int64(result.restored))), ("withdrawn", JSONValue(Int64(result.withdrawn))),
                        (
                            "refused",
                            .array(result.refused.map { .object(JSONObject([("file", .string($0.location.file ?? "")), ("message", .string($0.message))])) })
                        ),
                    ])))
        } else {
            let withdrawn = result.withdrawn > 0 ? ", took \(result.withdrawn) added file(s) back out into the quarantine" : ""
            writeStandardOutput("Put back \(result.restored) file(s)\(withdrawn).\n")
            writeErrors(result.refused)
        }
        throw ToolExit(status: result.refused.isEmpty ? .success : .problemsFound)
    }

    /// The plan as text: one numbered block per action.
    static func text(_ plan: RepairPlan, path: String, applied: Bool = false) -> String {
        var text = "Repair plan for \(escaped(plan.cloudRoot.path))\n"
        if plan.actions.isEmpty { text += "  nothing to do\n" }
        for (number, action) in plan.actions.enumerated() {
            text += "  \(number + 1). \(action.code)\n"
            for answer in action.answers { text += "     answers \(answer.code) \(answer.files.map(escaped).joined(separator: ", "))\n" }
            text += "     does: \(escaped(action.does))\n"
            for move in action.moves { text += "       move \(escaped(move.from.path)) -> \(escaped(move.to.path))\n" }
            for file in action.adds { text += "       add \(escaped(file.path))\n" }
            for file in action.quarantine { text += "       quarantine \(escaped(file.path))\n" }
            if let cure = action.cure { text += cureText(cure) }
            text += "     afterwards: \(escaped(action.afterwards))\n"
        }
        text += "verify errors: \(plan.errorsBefore) now, \(plan.errorsLeft.count) left after the plan\n"
        for left in plan.errorsLeft { text += "  left: \(left.code) \(left.files.map(escaped).joined(separator: ", "))\n" }
        if !applied && plan.hasMoves {
            text += "Nothing was changed. Apply with: logtool repair \(escaped(path)) --apply --quarantine DIR (DIR outside \(escaped(plan.cloudRoot.path)))\n"
        }
        return text
    }

    /// A cure's report (Spec/repair.md 3.6): what is lost with it, against wiping the folder.
    static func cureText(_ cure: JSONObject) -> String {
        func count(_ object: String, _ key: String) -> Int64 { cure[object]?.objectValue?[key]?.numberValue?.int64Value ?? 0 }
        var text = ""
        // With --device (Spec/repair.md 3.6.6): what the devices gave back, and why not more.
        for event in cure["recovered"]?.arrayValue ?? [] {
            guard let members = event.objectValue else { continue }
            text +=
                "     recovered: store \(escaped(members["store"]?.stringValue ?? "")) revision \(members["revision"]?.numberValue?.int64Value ?? 0) (global count \(members["globalCount"]?.numberValue?.int64Value ?? 0)) from \(escaped(members["device"]?.stringValue ?? "")): its changes are in the baseline\n"
        }
        for note in cure["recoveryNotes"]?.arrayValue ?? [] { text += "     not recovered: \(escaped(note.stringValue ?? ""))\n" }
        text += "     lost with the cure:\n"
        for run in cure["lost"]?.arrayValue ?? [] {
            let first = run.objectValue?["first"]?.numberValue?.int64Value ?? 0
            let last = run.objectValue?["last"]?.numberValue?.int64Value ?? 0
            text +=
                "       store \(escaped(run.objectValue?["store"]?.stringValue ?? "")) \(first == last ? "revision \(first)" : "revisions \(first)-\(last)") (contents unknown)\n"
        }
        let dependent = cure["dependentEvents"]?.arrayValue ?? []
        if cure["lost"]?.arrayValue?.isEmpty ?? true {
            text += "       nothing: every lost revision was recovered\n"
        } else {
            text +=
                "       \(dependent.count) readable event(s) depended on them and are kept: \(count("withCure", "propertyChanges")) property change(s) of \(count("withCure", "objects")) object(s) made without what was lost\n"
        }
        // The first 20 in text; `--json` lists every one.
        let objects = cure["dependentObjects"]?.arrayValue ?? []
        for object in objects.prefix(20) {
            guard let members = object.objectValue else { continue }
            let properties = (members["properties"]?.arrayValue ?? []).compactMap(\.stringValue).map(escaped).joined(separator: ", ")
            let kept = members["kept"] == .bool(true) ? "" : " (dropped: no readable event inserts it)"
            text +=
                "         \(escaped(members["entity"]?.stringValue ?? "")) \(escaped(members["id"]?.stringValue ?? "")): \(properties)\(kept)\n"
        }
        if objects.count > 20 { text += "         and \(objects.count - 20) more object(s) (--json lists them)\n" }
        text +=
            "     wiping the cloud folder instead loses \(count("withWipe", "events")) event(s) and baseline(s), \(count("withWipe", "propertyChanges")) property change(s) of \(count("withWipe", "objects")) object(s)\n"
        // Spec/repair.md 9.3 rule 7: the folder may need a second cure once every device has merged.
        text +=
            "     once every device has synced, verify the folder again: a revision missing again, or saves above the cure by two or more stores made before it, need a second repair --cure-lost\n"
        return text
    }

    /// The plan as JSON (Spec/repair.md 3.5, schema repair.schema.json).
    static func document(_ plan: RepairPlan) -> JSONValue {
        .object(
            JSONObject([
                ("cloudRoot", .string(plan.cloudRoot.path)),
                (
                    "actions",
                    .array(
                        plan.actions.map { action in
                            .object(
                                JSONObject(
                                    [
                                        ("code", .string(action.code)),
                                        (
                                            "answers",
                                            .array(
                                                action.answers.map {
                                                    .object(JSONObject([("code", .string($0.code)), ("files", .array($0.files.map(JSONValue.string)))]))
                                                })
                                        ),
                                        ("does", .string(action.does)), ("afterwards", .string(action.afterwards)),
                                        (
                                            "moves",
                                            .array(
                                                action.moves.map {
                                                    .object(JSONObject([("from", .string($0.from.path)), ("to", .string($0.to.path))]))
                                                })
                                        ),
                                        ("quarantine", .array(action.quarantine.map { .string($0.path) })),
                                        ("removeFoldersIfEmpty", .array(action.emptiedFolders.map { .string($0.path) })),
                                    ] + (action.adds.isEmpty ? [] : [("adds", .array(action.adds.map { .string($0.path) }))])
                                        + (action.cure.map { [("cure", JSONValue.object($0))] } ?? [])))
                        })
                ),
                ("errorsBefore", JSONValue(Int64(plan.errorsBefore))),
                (
                    "errorsLeft",
                    .array(plan.errorsLeft.map { .object(JSONObject([("code", .string($0.code)), ("files", .array($0.files.map(JSONValue.string)))])) })
                ),
            ]))
    }
}
