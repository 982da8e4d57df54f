import ArgumentParser
import EnsemblesToolkit
import Foundation

/// The suites of the conformance kit, one per fixture family, and the cases each one runs
/// (Spec/merge.md 9.9).
package enum ConformanceSuite: String, CaseIterable, Sendable, ExpressibleByArgument {
    case v2JSON = "v2-json"
    case v2Binary = "v2-binary"
    case wrappers
    case fileNames = "file-names"
    case models
    case v1JSON = "v1-json"
    case verify
    case merge
    case device

    /// The folder of `Fixtures/` the suite reads.
    package var folderName: String {
        switch self {
        case .merge, .device: "merge"
        default: rawValue
        }
    }

    /// The cases of the suite in `root` (its folder in the kit); nil when `root` cannot be
    /// listed. A `cases.json` that cannot be read is one failing case.
    package func cases(in root: URL) -> [ConformanceRunner.Case]? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
        let suite = SuiteBuilder(root: root)
        switch self {
        case .merge: return ConformanceRunner.cases(in: root)?.filter { !$0.name.hasPrefix("device-") }
        case .device: return ConformanceRunner.cases(in: root)?.filter { $0.name.hasPrefix("device-") }
        case .verify: return ConformanceRunner.cases(in: root)?.map(suite.verifyCase)
        case .v2JSON: return suite.v2JSON()
        case .v2Binary: return suite.v2Binary()
        case .wrappers: return suite.wrappers()
        case .fileNames: return suite.fileNames()
        case .models: return suite.models()
        case .v1JSON: return suite.v1JSON()
        }
    }
}

/// Builds the cases of the file-format suites from the families' `cases.json` files.
private struct SuiteBuilder {
    typealias Case = ConformanceRunner.Case
    typealias Plan = ConformanceRunner.Plan
    typealias Outcome = ConformanceRunner.Outcome

    var root: URL
    /// The repository root: `cases.json` paths "from the repository root" start here.
    var repository: URL { root.deletingLastPathComponent().deletingLastPathComponent() }

    /// The entries of `path`'s `cases` array with the document; a failing case when unreadable.
    func load(_ path: String, member: String = "cases") -> (document: JSONValue, entries: [JSONValue])? {
        guard let data = FileManager.default.contents(atPath: root.appendingPathComponent(path).path),
            let document = try? JSONParser.parse(data), let entries = document[JSONPointer([member])]?.arrayValue
        else { return nil }
        return (document, entries)
    }

    func broken(_ path: String) -> Case {
        Case(name: path, folder: root, problem: ["\(path) cannot be read as JSON with a cases array"])
    }

    /// A case that runs `logtool kit ARGS` (another engine: ARGS) in `folder`.
    func kit(
        _ name: String, in folder: URL, _ arguments: [String], rule: String?, status: Int32, expected: [String],
        check: @escaping @Sendable (Outcome) -> [String]
    ) -> Case {
        Case(name: name, folder: folder, plan: Plan(command: "kit", arguments: arguments, rule: rule, expectedStatus: status, expected: expected, check: check))
    }

    // MARK: Checks

    /// Standard output must be exactly `expected` (JSON followed by one LF when `lineFeed`).
    static func output(_ outcome: Outcome, equals expected: Data, name: String, lineFeed: Bool) -> [String] {
        let want = lineFeed ? expected + Data([0x0A]) : expected
        if outcome.stdout == want { return [] }
        if lineFeed, let wanted = try? JSONParser.parse(expected), let got = try? JSONParser.parse(outcome.stdout) {
            let byPointer = ConformanceRunner.jsonDifferences(wanted, got, at: .root, limit: 10)
            if !byPointer.isEmpty { return byPointer }
        }
        let common = zip(outcome.stdout, want).prefix { $0 == $1 }.count
        return [
            "standard output differs from \(name)\(lineFeed ? " + LF" : "") first at byte \(common) (expected \(want.count) bytes, got \(outcome.stdout.count))"
        ]
    }

    /// The errors document an engine prints on failure (Spec/merge.md 9.9).
    static func errors(_ outcome: Outcome) -> [JSONValue]? {
        guard let document = try? JSONParser.parse(outcome.stdout) else { return nil }
        return document[JSONPointer(["errors"])]?.arrayValue
    }

    /// The first error must have these members (a `nil` value is not compared).
    static func firstError(_ outcome: Outcome, _ wanted: [(String, JSONValue?)]) -> [String] {
        guard let errors = errors(outcome) else {
            return ["standard output is not {\"errors\":[...]}: \(String(decoding: outcome.stdout.prefix(200), as: UTF8.self))"]
        }
        guard let first = errors.first else { return ["the errors array is empty"] }
        var problems: [String] = []
        for (member, value) in wanted {
            guard let value else { continue }
            let got = first[JSONPointer([member])] ?? .null
            if got != value {
                problems.append("first error's \(member): expected \(JSONWriter().string(value)), got \(JSONWriter().string(got))")
            }
        }
        if !problems.isEmpty { problems.append("first error: \(JSONWriter().string(MergeCases.withoutMembers(["message"], first)))") }
        return problems
    }

    /// What the case names, as the `expected:` lines of a failure.
    static func describe(_ wanted: [(String, JSONValue?)]) -> [String] {
        [
            "exit status 1 and a first error with "
                + wanted.compactMap { key, value in value.map { "\(key) \(JSONWriter().string($0))" } }.joined(separator: ", ")
        ]
    }

    /// The rule of an entry: its own `rule`, or the family's.
    static func rule(_ entry: JSONValue, _ fallback: String) -> String {
        entry[JSONPointer(["rule"])]?.stringValue ?? fallback
    }

    static func string(_ entry: JSONValue, _ member: String) -> String? { entry[JSONPointer([member])]?.stringValue }

    /// `member` as a compared value: absent is not compared, `null` is.
    static func value(_ entry: JSONValue, _ member: String) -> JSONValue? { entry[JSONPointer([member])] }

    func contents(_ url: URL) -> Data? { FileManager.default.contents(atPath: url.path) }

    // MARK: v2-json

    func v2JSON() -> [Case] {
        var cases: [Case] = []
        let valid = root.appendingPathComponent("valid")
        for file in Self.files(in: valid, suffix: ".json") {
            cases.append(
                kit(
                    "valid/\(file)", in: valid, ["decode", file], rule: "v2-json.md 2, 5, 6 (a valid event reads; its canonical form)", status: 0,
                    expected: ["exit status 0 and the event as one canonical JSON document and LF"]
                ) { outcome in
                    guard outcome.stdout.last == 0x0A, let document = try? JSONParser.parse(outcome.stdout.dropLast()) else {
                        return ["standard output is not one JSON document and LF"]
                    }
                    let canonical = Data(JSONWriter().bytes(document) + [0x0A])
                    return canonical == outcome.stdout ? [] : ["standard output is JSON but not canonical (v2-json.md 6)"]
                })
        }
        let canonical = root.appendingPathComponent("canonical")
        for input in Self.files(in: canonical, suffix: ".input.json") {
            let name = String(input.dropLast(".input.json".count))
            let expectedFile = "\(name).expected.json"
            let expected = contents(canonical.appendingPathComponent(expectedFile)) ?? Data()
            for (caseName, file) in [(name, input), ("\(name).expected", expectedFile)] {
                cases.append(
                    kit(
                        "canonical/\(caseName)", in: canonical, ["decode", file], rule: "v2-json.md 6 (canonical output)", status: 0,
                        expected: ["exit status 0 and the bytes of \(expectedFile) and LF"]
                    ) { Self.output($0, equals: expected, name: expectedFile, lineFeed: true) })
            }
        }
        let multipart = root.appendingPathComponent("multipart")
        let parts = Self.files(in: multipart, suffix: ".cdeevent")
        if !parts.isEmpty {
            let joined = contents(multipart.appendingPathComponent("expected-joined.json")) ?? Data()
            cases.append(
                kit(
                    "multipart/joined", in: multipart, ["decode"] + parts, rule: "v2-json.md 8 (multipart files joined)", status: 0,
                    expected: ["exit status 0 and the bytes of expected-joined.json and LF"]
                ) { Self.output($0, equals: joined, name: "expected-joined.json", lineFeed: true) })
        }
        let invalid = root.appendingPathComponent("invalid")
        if case let (_, entries)? = load("invalid/cases.json") {
            for entry in entries {
                guard let file = Self.string(entry, "file") else { continue }
                let part = entry[JSONPointer(["part"])]?.arrayValue?.compactMap { $0.numberValue?.int64Value }
                let partArguments = part.map { $0.count == 2 ? ["--part", "\($0[0])/\($0[1])"] : [] } ?? []
                let wanted = [("code", Self.value(entry, "code")), ("pointer", Self.value(entry, "pointer")), ("offset", Self.value(entry, "offset"))]
                cases.append(
                    kit(
                        "invalid/\(file)", in: invalid, ["decode"] + partArguments + [file], rule: Self.rule(entry, "v2-json.md 9"), status: 1,
                        expected: Self.describe(wanted)
                    ) { Self.firstError($0, wanted) })
            }
        } else {
            cases.append(broken("invalid/cases.json"))
        }
        let modelInvalid = root.appendingPathComponent("model-invalid")
        if case let (document, entries)? = load("model-invalid/cases.json") {
            let model = "../../../" + (Self.string(document, "model") ?? "")
            for entry in entries {
                guard let file = Self.string(entry, "file") else { continue }
                let pair = [Self.value(entry, "code") ?? .null, Self.value(entry, "pointer") ?? .null]
                cases.append(
                    kit(
                        "model-invalid/\(file)", in: modelInvalid, ["decode", "--model", model, file], rule: Self.rule(entry, "model.md 9.3"), status: 1,
                        expected: ["exit status 1 and exactly one model.* (code, pointer): \(JSONWriter().string(.array(pair)))"]
                    ) { outcome in
                        guard let errors = Self.errors(outcome) else { return ["standard output is not {\"errors\":[...]}"] }
                        var pairs: [JSONValue] = []
                        for error in errors {
                            let found = JSONValue.array([error[JSONPointer(["code"])] ?? .null, error[JSONPointer(["pointer"])] ?? .null])
                            if error[JSONPointer(["code"])]?.stringValue?.hasPrefix("model.") == true, !pairs.contains(found) { pairs.append(found) }
                        }
                        return pairs == [.array(pair)]
                            ? [] : ["model.* (code, pointer) pairs: expected [\(JSONWriter().string(.array(pair)))], got \(JSONWriter().string(.array(pairs)))"]
                    })
            }
        } else {
            cases.append(broken("model-invalid/cases.json"))
        }
        return cases
    }

    // MARK: v2-binary

    func v2Binary() -> [Case] {
        var cases: [Case] = []
        let valid = root.appendingPathComponent("valid")
        for json in Self.files(in: valid, suffix: ".json") {
            let name = String(json.dropLast(".json".count))
            let jsonBytes = contents(valid.appendingPathComponent(json)) ?? Data()
            let binary = contents(valid.appendingPathComponent("\(name).bin")) ?? Data()
            cases.append(
                kit(
                    "valid/\(name).bin", in: valid, ["decode", "--binary", "\(name).bin"], rule: "v2-binary.md 13 (worked example, read)", status: 0,
                    expected: ["exit status 0 and the bytes of \(json) and LF"]
                ) { Self.output($0, equals: jsonBytes, name: json, lineFeed: true) })
            cases.append(
                kit(
                    "valid/\(name).json", in: valid, ["encode", json], rule: "v2-binary.md 11, 13 (canonical bytes of the worked example)", status: 0,
                    expected: ["exit status 0 and the bytes of \(name).bin"]
                ) { Self.output($0, equals: binary, name: "\(name).bin", lineFeed: false) })
        }
        let noncanonical = root.appendingPathComponent("noncanonical")
        if case let (_, entries)? = load("noncanonical/cases.json") {
            for entry in entries {
                guard let file = Self.string(entry, "file"), let json = Self.string(entry, "json") else { continue }
                let jsonBytes = contents(noncanonical.appendingPathComponent(json)) ?? Data()
                cases.append(
                    kit(
                        "noncanonical/\(file)", in: noncanonical, ["decode", "--binary", file],
                        rule: Self.rule(entry, "v2-binary.md 10, 11 (valid but not canonical: read as its event)"), status: 0,
                        expected: ["exit status 0 and the bytes of \(json) and LF"]
                    ) { Self.output($0, equals: jsonBytes, name: json, lineFeed: true) })
            }
        } else {
            cases.append(broken("noncanonical/cases.json"))
        }
        let invalid = root.appendingPathComponent("invalid")
        if case let (_, entries)? = load("invalid/cases.json") {
            for entry in entries {
                guard let file = Self.string(entry, "file") else { continue }
                // A file named as a part is read in that role; the others by the binary decoder.
                let role = CloudFileName.parseEvent(file)?.part.map { ["--part", "\($0.index)/\($0.count)"] } ?? ["--binary"]
                let wanted =
                    [("code", Self.value(entry, "code")), ("offset", Self.value(entry, "offset"))]
                    + (Self.string(entry, "code")?.hasPrefix("v2.") == true ? [("pointer", Self.value(entry, "pointer"))] : [])
                cases.append(
                    kit(
                        "invalid/\(file)", in: invalid, ["decode"] + role + [file], rule: Self.rule(entry, "v2-binary.md 12"), status: 1,
                        expected: Self.describe(wanted)
                    ) { Self.firstError($0, wanted) })
            }
        } else {
            cases.append(broken("invalid/cases.json"))
        }
        let blobs = root.appendingPathComponent("blobs")
        if case let (_, entries)? = load("blobs/cases.json") {
            for entry in entries {
                guard let file = Self.string(entry, "file") else { continue }
                let wanted = [("code", Self.value(entry, "code"))]
                cases.append(
                    kit("blobs/\(file)", in: blobs, ["blob", file], rule: Self.rule(entry, "data-blobs.md 6"), status: 1, expected: Self.describe(wanted)) {
                        Self.firstError($0, wanted)
                    })
            }
            if let raw = contents(blobs.appendingPathComponent("hello.raw")) {
                for file in ["hello.container", "hello.raw"] {
                    cases.append(
                        kit(
                            "blobs/\(file)", in: blobs, ["blob", file], rule: "data-blobs.md 3, 4 (a container gives its content, a raw file itself)",
                            status: 0,
                            expected: ["exit status 0 and the bytes of hello.raw"]
                        ) { Self.output($0, equals: raw, name: "hello.raw", lineFeed: false) })
                }
            }
        } else {
            cases.append(broken("blobs/cases.json"))
        }
        return cases
    }

    // MARK: wrappers

    func wrappers() -> [Case] {
        var cases: [Case] = []
        let valid = root.appendingPathComponent("valid")
        if case let (document, entries)? = load("valid/cases.json") {
            let digest = Self.value(document, "contentSHA256") ?? .null
            for entry in entries {
                guard let file = Self.string(entry, "file") else { continue }
                let layers = Self.value(entry, "layers") ?? .null
                let password = Self.string(entry, "password").map { ["--password", $0] } ?? []
                cases.append(
                    kit(
                        "valid/\(file)", in: valid, ["unwrap"] + password + [file], rule: Self.rule(entry, "wrappers.md 5 (layers removed outermost first)"),
                        status: 0, expected: ["exit status 0, content SHA-256 \(JSONWriter().string(digest)), layers \(JSONWriter().string(layers))"]
                    ) { outcome in
                        guard let got = try? JSONParser.parse(outcome.stdout) else { return ["standard output is not JSON"] }
                        let want = JSONValue.object(JSONObject([("contentSHA256", digest), ("layers", layers)]))
                        return ConformanceRunner.jsonDifferences(want, got, at: .root, limit: 10)
                    })
            }
        } else {
            cases.append(broken("valid/cases.json"))
        }
        let damaged = root.appendingPathComponent("damaged")
        if case let (_, entries)? = load("damaged/cases.json") {
            for entry in entries {
                guard let file = Self.string(entry, "file") else { continue }
                let password = Self.string(entry, "password").map { ["--password", $0] } ?? []
                let wanted = [("code", Self.value(entry, "code")), ("offset", Self.value(entry, "offset"))]
                cases.append(
                    kit(
                        "damaged/\(file)", in: damaged, ["unwrap"] + password + [file], rule: Self.rule(entry, "wrappers.md 7"), status: 1,
                        expected: Self.describe(wanted)
                    ) { Self.firstError($0, wanted) })
            }
        } else {
            cases.append(broken("damaged/cases.json"))
        }
        return cases
    }

    // MARK: file-names

    func fileNames() -> [Case] {
        guard case let (_, entries)? = load("cases.json") else { return [broken("cases.json")] }
        return entries.compactMap { entry in
            guard let folder = Self.string(entry, "folder"), let name = Self.string(entry, "name") else { return nil }
            let expect = Self.value(entry, "expect") ?? .null
            return kit(
                "\(folder)/\(name)", in: root, ["file-name", "--", folder, name], rule: Self.rule(entry, "cloud-layout.md 4, 7"), status: 0,
                expected: ["exit status 0 and \(JSONWriter().string(expect))"]
            ) { outcome in
                guard let got = try? JSONParser.parse(outcome.stdout) else { return ["standard output is not JSON"] }
                return ConformanceRunner.jsonDifferences(expect, got, at: .root, limit: 10)
            }
        }
    }

    // MARK: models

    func models() -> [Case] {
        var cases: [Case] = []
        let expected = root.appendingPathComponent("expected")
        for hashFile in Self.files(in: expected, suffix: ".hash.json") {
            let name = String(hashFile.dropLast(".hash.json".count))
            guard let data = contents(expected.appendingPathComponent(hashFile)), let info = try? JSONParser.parse(data),
                let path = Self.string(info, "path")
            else { continue }
            let version = Self.string(info, "modelVersionOption").map { ["--model-version", $0] } ?? []
            let description = contents(expected.appendingPathComponent("\(name).description.json")) ?? Data()
            cases.append(
                kit(
                    "expected/\(name)", in: repository, ["model"] + version + [path], rule: "model.md 7 (the model description, canonical)", status: 0,
                    expected: ["exit status 0 and the bytes of expected/\(name).description.json and LF"]
                ) { Self.output($0, equals: description, name: "expected/\(name).description.json", lineFeed: true) })
        }
        let brokenFolder = root.appendingPathComponent("broken")
        if case let (_, entries)? = load("broken/cases.json") {
            for entry in entries {
                guard let path = Self.string(entry, "path") else { continue }
                // model.md 4.2 does not compare the line of an XML syntax error.
                let wanted =
                    [("code", Self.value(entry, "code")), ("file", Self.value(entry, "file"))]
                    + (Self.string(entry, "code") != "datamodel.xml-syntax" ? [("line", Self.value(entry, "line"))] : [])
                cases.append(
                    kit("broken/\(path)", in: brokenFolder, ["model", path], rule: Self.rule(entry, "model.md 4"), status: 1, expected: Self.describe(wanted)) {
                        Self.firstError($0, wanted)
                    })
            }
        } else {
            cases.append(broken("broken/cases.json"))
        }
        return cases
    }

    // MARK: v1-json

    /// The v1-json cases run `logtool convert` (Spec/convert.md): the engine takes its
    /// arguments and writes DESTINATION, which the runner compares file by file.
    func v1JSON() -> [Case] {
        var cases: [Case] = []
        let model = "../../../Fixtures/models/Inheritance.xcdatamodeld"
        let valid = root.appendingPathComponent("valid")
        if case let (_, entries)? = load("valid/cases.json") {
            for entry in entries {
                guard let file = Self.string(entry, "file") else { continue }
                let lenient = entry[JSONPointer(["lenient"])] == .bool(true) ? ["--lenient"] : []
                let isEvent = Self.string(entry, "kind") == "event"
                for (label, dialect, folderMember, filesMember) in [
                    ("", [String](), "expected", "files"), (" --to v1", ["--to", "v1"], "expectedV1", "filesV1"),
                ] {
                    guard let expectedFolder = Self.string(entry, folderMember) else { continue }
                    let files = (entry[JSONPointer([filesMember])]?.arrayValue ?? []).compactMap(\.stringValue)
                    let folder = valid.appendingPathComponent(expectedFolder)
                    cases.append(
                        Case(
                            name: "valid/\(file)\(label)", folder: valid,
                            plan: Plan(
                                command: "convert", arguments: dialect + ["--model", model] + lenient + [file, ConformanceRunner.scratchArgument],
                                rule: Self.rule(entry, label.isEmpty ? "convert.md 3, 4 (v1 to v2)" : "v1-json.md 9 (canonical v1)"), expectedStatus: 0,
                                expected: ["exit status 0 and DESTINATION holding exactly \(expectedFolder): \(files.joined(separator: ", "))"]
                            ) { outcome in
                                Self.folderDifferences(outcome.scratch, expected: folder, files: files, single: isEvent ? files.first : nil)
                            }))
                }
            }
        } else {
            cases.append(broken("valid/cases.json"))
        }
        for (folderName, rule) in [("invalid", "v1-json.md 7"), ("convert-refused", "convert.md 9")] {
            let folder = root.appendingPathComponent(folderName)
            guard case let (document, entries)? = load("\(folderName)/cases.json") else {
                cases.append(broken("\(folderName)/cases.json"))
                continue
            }
            let caseModel = "../../../" + (Self.string(document, "model") ?? "Fixtures/models/Inheritance.xcdatamodeld")
            for entry in entries {
                guard let file = Self.string(entry, "file") else { continue }
                let wanted = [("code", Self.value(entry, "code")), ("pointer", Self.value(entry, "pointer")), ("offset", Self.value(entry, "offset"))]
                cases.append(
                    Case(
                        name: "\(folderName)/\(file)", folder: folder,
                        plan: Plan(
                            command: "convert", arguments: ["--json", "--model", caseModel, file, ConformanceRunner.scratchArgument],
                            rule: Self.rule(entry, rule), expectedStatus: 1, expected: Self.describe(wanted) + ["nothing written at DESTINATION"]
                        ) { outcome in
                            var problems = Self.firstError(outcome, wanted)
                            if let scratch = outcome.scratch, FileManager.default.fileExists(atPath: scratch.path) {
                                problems.append("DESTINATION was written")
                            }
                            return problems
                        }))
            }
        }
        if case let (document, entries)? = load("originals.json", member: "originals") {
            let originalsModel = Self.string(document, "model") ?? ""
            for entry in entries {
                guard let file = Self.string(entry, "file"), let expectedFolder = Self.string(entry, "expected") else { continue }
                let folder = root.appendingPathComponent(expectedFolder)
                let files = Self.allFiles(in: folder)
                cases.append(
                    Case(
                        name: expectedFolder, folder: repository,
                        plan: Plan(
                            command: "convert", arguments: ["--lenient", "--model", originalsModel, file, ConformanceRunner.scratchArgument],
                            rule: Self.rule(entry, "convert.md 3, 8 (the original 1.x logs)"), expectedStatus: 0,
                            expected: ["exit status 0 and DESTINATION holding exactly \(expectedFolder): \(files.joined(separator: ", "))"]
                        ) { Self.folderDifferences($0.scratch, expected: folder, files: files, single: nil) }))
            }
        } else {
            cases.append(broken("originals.json"))
        }
        return cases
    }

    /// DESTINATION must hold exactly `files`, each with the bytes of the same file in
    /// `expected`; with `single`, DESTINATION is that one file.
    static func folderDifferences(_ destination: URL?, expected: URL, files: [String], single: String?) -> [String] {
        guard let destination else { return ["no DESTINATION"] }
        var problems: [String] = []
        var pairs: [(got: URL, want: URL, name: String)] = []
        if let single {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                return ["DESTINATION is not a file"]
            }
            pairs = [(destination, expected.appendingPathComponent(single), single)]
        } else {
            let written = allFiles(in: destination)
            if written != files.sorted(by: utf8Precedes) {
                problems += files.filter { !written.contains($0) }.map { "missing file: \($0)" }
                problems += written.filter { !files.contains($0) }.map { "unexpected file: \($0)" }
            }
            pairs = files.filter(written.contains).map { (destination.appendingPathComponent($0), expected.appendingPathComponent($0), $0) }
        }
        for (got, want, name) in pairs {
            let gotBytes = FileManager.default.contents(atPath: got.path) ?? Data()
            let wantBytes = FileManager.default.contents(atPath: want.path) ?? Data()
            if gotBytes != wantBytes {
                let common = zip(gotBytes, wantBytes).prefix { $0 == $1 }.count
                problems.append("\(name) differs from the expected file first at byte \(common) (expected \(wantBytes.count) bytes, got \(gotBytes.count))")
            }
        }
        return problems
    }

    /// Every regular file below `folder`, as paths relative to it, in UTF-8 order.
    static func allFiles(in folder: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var files: [String] = []
        while let path = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(path).path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(path)
            }
        }
        return files.sorted(by: utf8Precedes)
    }

    // MARK: verify

    /// A verify case folder: its `command` (`["verify", ARGS...]`) in the folder; the `--json`
    /// document equals expected/verify.json once `reason` and `consequence` are left out of
    /// both (Fixtures/verify/README.md, Spec/diagnostics.md 1).
    func verifyCase(_ found: Case) -> Case {
        let folder = found.folder
        func failing(_ line: String) -> Case {
            Case(name: found.name, folder: folder, problem: [line])
        }
        guard let data = contents(folder.appendingPathComponent("case.json")), let info = try? JSONParser.parse(data),
            let command = info[JSONPointer(["command"])]?.arrayValue?.compactMap(\.stringValue), command.first == "verify",
            let status = info[JSONPointer(["exitCode"])]?.numberValue?.int64Value
        else {
            return failing("case.json is not JSON with a command [\"verify\", ARGS...] and an exitCode")
        }
        guard let expected = contents(folder.appendingPathComponent("expected/verify.json")), let want = try? JSONParser.parse(expected) else {
            return failing("expected/verify.json is missing or not JSON")
        }
        let informative: Set<String> = ["reason", "consequence"]
        let codes = (want[JSONPointer(["diagnostics"])]?.arrayValue ?? []).compactMap { $0[JSONPointer(["code"])]?.stringValue }
        let plan = Plan(
            command: "verify", arguments: Array(command.dropFirst()), rule: Self.string(info, "rule"), expectedStatus: Int32(status),
            expected: ["the document of expected/verify.json (diagnostics: \(codes.isEmpty ? "none" : codes.joined(separator: ", ")))"]
        ) { outcome in
            guard let got = try? JSONParser.parse(outcome.stdout) else { return ["standard output is not one JSON document"] }
            return ConformanceRunner.jsonDifferences(
                MergeCases.withoutMembers(informative, want), MergeCases.withoutMembers(informative, got), at: .root, limit: 20)
        }
        return Case(name: found.name, folder: folder, plan: plan)
    }

    /// The names of the regular files in `folder` that end with `suffix`, in UTF-8 order.
    static func files(in folder: URL, suffix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(suffix) }.sorted(by: utf8Precedes)
    }
}
