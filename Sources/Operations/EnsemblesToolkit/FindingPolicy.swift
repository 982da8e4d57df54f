import Foundation
import JSONDocument
import CloudFolder

extension FormatError.Code {
    /// A `--severity` value that names no code or level, a code twice, or lowers a code that
    /// makes a merge fail (Spec/verify.md 5.1).
    public static let verifyInvalidSeverity = Self("verify.invalid-severity")
    /// An `--accept` file that is not an accept list (Spec/verify.md 5.1).
    public static let verifyInvalidAcceptList = Self("verify.invalid-accept-list")
    /// A `--write-accept` file that exists without `--force` (Spec/verify.md 5.1).
    public static let verifyAcceptListExists = Self("verify.accept-list-exists")
}

/// How the user wants `verify`'s diagnostics to count: chosen severities and an accept list of
/// known damage (Spec/verify.md 5.1). What is found never changes; only its severity, whether
/// it is listed, and whether it counts for the exit status.
package struct FindingPolicy: Sendable {
    /// The chosen severity of each code given; nil: not reported (`ignore`).
    package var severities: [FormatError.Code: Diagnostic.Severity?] = [:]
    package var accepted: [AcceptedFinding] = []
    /// Whether each diagnostic's files are digested even without an accept list, for writing one.
    package var recordsDigests = false

    package init() {}

    /// Whether the policy changes nothing: the report is verify's own.
    var changesNothing: Bool { severities.isEmpty && accepted.isEmpty && !recordsDigests }

    /// The codes that make a merge fail, with the severity Spec/diagnostics.md 3 gives them: never
    /// lowered, never accepted (verify's exit status forecasts a merge, which takes no policy).
    static let mergeFailing: [FormatError.Code: Diagnostic.Severity] = [
        .verifyUnreadableFile: .error, .verifyDuplicatePart: .error, .verifyIncompleteEvent: .error, .verifyConflictingRevision: .error,
        .verifyUnregisteredStore: .error, .verifyRevisionGap: .error, .verifyMissingDependency: .error, .verifyMissingDataFile: .error,
        .verifyUnknownModelVersion: .error, .verifyMoreFindings: .error, .verifyIncompleteMultipart: .warning, .verifyDeviceStop: .error,
    ]

    /// Every code a diagnostic can have (Spec/diagnostics.md 3).
    static let codes: Set<FormatError.Code> = Set(mergeFailing.keys).union([
        .verifyInvalidRegistration, .verifyNameMismatch, .verifyWrongFolder, .verifyCoveredEvent, .verifyRedundantBaseline,
        .verifyConcurrentBaselines, .verifyDebris, .verifyDuplicateFolder, .verifyOrphanDataFile, .verifyUnknownKeys, .verifyHeldBack,
        .verifyMixedWrapping, .verifyConcurrentInsert, .verifyReinsertedObject, .verifyInsertAndDelete,
    ])

    /// Reads `--severity CODE=LEVEL` values (LEVEL: error, warning, info or ignore).
    package static func severities(_ values: [String]) throws(FormatError) -> [FormatError.Code: Diagnostic.Severity?] {
        var chosen: [FormatError.Code: Diagnostic.Severity?] = [:]
        for value in values {
            func invalid(_ why: String) -> FormatError { FormatError(.verifyInvalidSeverity, "--severity \(value): \(why)") }
            guard let equals = value.firstIndex(of: "=") else { throw invalid("expected CODE=LEVEL") }
            let code = FormatError.Code(String(value[..<equals])), level = value[value.index(after: equals)...]
            guard chosen.index(forKey: code) == nil else { throw invalid("\(code) is given twice") }
            let severity: Diagnostic.Severity?
            if level == "ignore" {
                severity = nil
            } else if let named = Diagnostic.Severity(rawValue: String(level)) {
                severity = named
            } else {
                throw invalid("the level must be error, warning, info or ignore")
            }
            chosen[code] = severity
            do {
                try validate([code: severity])
            } catch {
                throw invalid(error.message)
            }
        }
        return chosen
    }

    /// Checks chosen severities: known codes, and no code that makes a merge fail set below its
    /// severity (Spec/verify.md 5.1 item 1).
    package static func validate(_ chosen: [FormatError.Code: Diagnostic.Severity?]) throws(FormatError) {
        for (code, severity) in chosen.sorted(by: { $0.key < $1.key }) {
            guard codes.contains(code) else {
                throw FormatError(.verifyInvalidSeverity, "\(code) is not a code of verify (Spec/diagnostics.md 3)")
            }
            if let floor = mergeFailing[code], severity.map({ $0 > floor }) ?? true {
                throw FormatError(
                    .verifyInvalidSeverity, "\(code) makes a merge fail, so it stays \(floor == .error ? "an error" : "a warning or an error")")
            }
        }
    }

    /// Accept lists are small: one entry per known finding.
    static let maximumAcceptListBytes = 64 << 20

    /// Applies the policy to one ensemble's verification, reading digests through `listing`.
    func apply(to verification: EnsembleVerification, listing: EnsembleListing) -> EnsembleVerification {
        var result = verification
        // By the paths' bytes: files named in NFC and NFD are two files with their own digests.
        var digests: [ExactString: String?] = [:]
        func digest(_ path: String) -> String? {
            if let known = digests[ExactString(path)] { return known }
            let value = (try? DataFileReader.digest(of: listing.file(path))).map(lowercaseHex)
            digests[ExactString(path)] = value
            return value
        }
        let candidates = accepted.filter { $0.ensemble == verification.displayPath }
        result.diagnostics = []
        for var diagnostic in verification.diagnostics {
            if let chosen = severities[diagnostic.code] {
                guard let chosen else {
                    result.ignored += 1
                    continue
                }
                diagnostic.severity = chosen
                diagnostic.severityChosen = true
            }
            if recordsDigests || !candidates.isEmpty { for file in diagnostic.files { _ = digest(file) } }
            if Self.mergeFailing[diagnostic.code] == nil {
                let details = JSONWriter().string(.object(diagnostic.details))
                diagnostic.accepted = candidates.contains { entry in
                    entry.code == diagnostic.code && entry.files.elementsEqual(diagnostic.files, by: { $0.utf8.elementsEqual($1.utf8) })
                        && entry.details.utf8.elementsEqual(details.utf8)
                        && diagnostic.files.allSatisfy { file in entry.sha256[ExactString(file)].map { $0 == digests[ExactString(file)] ?? nil } ?? false }
                }
            }
            result.diagnostics.append(diagnostic)
        }
        result.diagnostics.sort(by: EnsembleVerifier.order)
        result.fileDigests = digests
        return result
    }

    /// The accept list of every diagnostic of `results` that may be accepted, as one line of
    /// canonical JSON (Spec/verify.md 5.1 item 3). Needs the digests a policy with
    /// ``recordsDigests`` recorded.
    package static func acceptList(_ results: [EnsembleVerification]) -> [UInt8] {
        var entries: [JSONValue] = []
        for result in results {
            for diagnostic in result.diagnostics where mergeFailing[diagnostic.code] == nil {
                let digests = diagnostic.files.map { file in (file, (result.fileDigests[ExactString(file)] ?? nil).map(JSONValue.string) ?? .null) }
                entries.append(
                    .object(
                        JSONObject([
                            ("ensemble", .string(result.displayPath)), ("code", .string(diagnostic.code.rawValue)),
                            ("files", .array(diagnostic.files.map(JSONValue.string))), ("details", .object(diagnostic.details)),
                            ("sha256", .object(JSONObject(digests))),
                        ])))
            }
        }
        let document = JSONValue.object(JSONObject([("acceptVersion", JSONValue(Int64(1))), ("accepted", .array(entries))]))
        return JSONWriter().bytes(document) + [UInt8(ascii: "\n")]
    }

    /// Reads an accept list (Spec/verify.md 5.1 item 2); errors carry the JSON pointer of the
    /// first fault and the file's path.
    package static func readAcceptList(_ bytes: [UInt8], path: String) throws(FormatError) -> [AcceptedFinding] {
        func invalid(_ why: String, _ pointer: JSONPointer) -> FormatError {
            FormatError(.verifyInvalidAcceptList, why, location: .init(file: path, pointer: pointer))
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw FormatError(.verifyInvalidAcceptList, "not JSON: \(error.message)", location: .init(file: path, offset: error.location.offset))
        }
        let root = JSONPointer([])
        guard let object = document.objectValue, Set(object.members.map(\.key)) == ["acceptVersion", "accepted"] else {
            throw invalid("an accept list is an object with exactly acceptVersion and accepted", root)
        }
        guard object["acceptVersion"] == JSONValue(Int64(1)) else { throw invalid("acceptVersion must be 1", root / "acceptVersion") }
        guard let list = object["accepted"]?.arrayValue else { throw invalid("accepted must be an array", root / "accepted") }
        var entries: [AcceptedFinding] = []
        for (index, element) in list.enumerated() {
            let at = root / "accepted" / index
            guard let entry = element.objectValue, Set(entry.members.map(\.key)) == ["ensemble", "code", "files", "details", "sha256"] else {
                throw invalid("an entry is an object with exactly ensemble, code, files, details and sha256", at)
            }
            guard let ensemble = entry["ensemble"]?.stringValue else { throw invalid("ensemble must be a string", at / "ensemble") }
            guard let codeText = entry["code"]?.stringValue, codes.contains(FormatError.Code(codeText)) else {
                throw invalid("code must be a code of verify (Spec/diagnostics.md 3)", at / "code")
            }
            let code = FormatError.Code(codeText)
            guard mergeFailing[code] == nil else { throw invalid("\(code) makes a merge fail and cannot be accepted", at / "code") }
            guard let files = entry["files"]?.arrayValue?.compactMap(\.stringValue), files.count == entry["files"]?.arrayValue?.count, !files.isEmpty
            else { throw invalid("files must be a non-empty array of strings", at / "files") }
            guard let details = entry["details"]?.objectValue else { throw invalid("details must be an object", at / "details") }
            guard let sha256 = entry["sha256"]?.objectValue, Set(sha256.members.map { ExactString($0.key) }) == Set(files.map(ExactString.init)) else {
                throw invalid("sha256 must have one member for each of the files", at / "sha256")
            }
            var digests: [ExactString: String?] = [:]
            for (file, value) in sha256.members {
                switch value {
                case .null: digests[ExactString(file)] = .some(nil)
                case .string(let hex) where hex.utf8.count == 64 && hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }):
                    digests[ExactString(file)] = hex
                default: throw invalid("a digest is 64 lowercase hexadecimal digits or null", at / "sha256" / file)
                }
            }
            entries.append(
                AcceptedFinding(ensemble: ensemble, code: code, files: files, details: JSONWriter().string(.object(details)), sha256: digests))
        }
        return entries
    }
}

/// One entry of an accept list (Spec/verify.md 5.1): a diagnostic and the digests its files had.
package struct AcceptedFinding: Sendable {
    var ensemble: String
    var code: FormatError.Code
    var files: [String]
    /// Canonical JSON text.
    var details: String
    /// Lowercase hexadecimal, or nil for a path that was not a readable regular file.
    var sha256: [ExactString: String?]
}
