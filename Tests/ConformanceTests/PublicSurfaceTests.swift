import Foundation
import Testing

/// Only what a library user calls is public: every public type declared under Sources/ is in
/// this list, so that a type made public by accident fails here and is either made package or
/// added on purpose (at most 56).
@Suite("Public surface")
struct PublicSurfaceTests {
    static let expected: Set<String> = [
        "CloudFolder.RepairUndoResult", "DataModel.DataModel", "DataModel.ModelBundle", "EnsembleModel.AttributeValue",
        "EnsembleModel.ChangeType", "EnsembleModel.Event", "EnsembleModel.EventType", "EnsembleModel.ObjectChange",
        "EnsembleModel.PropertyChange", "EnsembleModel.Value", "EnsemblesToolkit.Action", "EnsemblesToolkit.BaselineFile",
        "EnsemblesToolkit.Change", "EnsemblesToolkit.ConversionReport", "EnsemblesToolkit.DeviceView", "EnsemblesToolkit.Diagnostic",
        "EnsemblesToolkit.Ensemble", "EnsemblesToolkit.EnsembleError", "EnsemblesToolkit.EnsembleFolder",
        "EnsemblesToolkit.EnsembleVerification", "EnsemblesToolkit.EventFile", "EnsemblesToolkit.FinalProperty", "EnsemblesToolkit.Finding",
        "EnsemblesToolkit.FolderInspection", "EnsemblesToolkit.Format", "EnsemblesToolkit.Kind", "EnsemblesToolkit.Lane",
        "EnsemblesToolkit.Mark", "EnsemblesToolkit.ObjectHistory", "EnsemblesToolkit.Options", "EnsemblesToolkit.RebaseSummary",
        "EnsemblesToolkit.RepairPlan", "EnsemblesToolkit.RepairResult", "EnsemblesToolkit.Severity", "EnsemblesToolkit.Store",
        "EnsemblesToolkit.TimelineReport", "EventCodecs.V2BinaryDecoder", "EventCodecs.V2BinaryEncoder", "EventCodecs.V2JSONDecoder",
        "EventCodecs.V2JSONEncoder", "FileWrappers.Credentials", "FileWrappers.PasswordSource", "FileWrappers.RNCryptor",
        "FileWrappers.Wrapping", "JSONDocument.Code", "JSONDocument.FormatError", "JSONDocument.JSONNumber", "JSONDocument.JSONObject",
        "JSONDocument.JSONParser", "JSONDocument.JSONPointer", "JSONDocument.JSONReadingOptions", "JSONDocument.JSONValue",
        "JSONDocument.JSONWriter", "JSONDocument.Location", "MergeEngine.IntegrityProblem", "MergeEngine.StoreState",
    ]

    /// MODULE.TYPE of every `public` struct, enum, class, protocol, actor or typealias in Sources/.
    static func declared() throws -> [String] {
        var found: [String] = []
        let sources = SpecCompletenessTests.packageRoot.appendingPathComponent("Sources")
        // Foundation's (ICU's) matcher, as in SpecCompletenessTests: Swift's `Regex` is slow here.
        let regex = try NSRegularExpression(pattern: #"^\s*public (?:final )?(?:struct|enum|class|protocol|actor|typealias) ([A-Za-z0-9_]+)"#)
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let module = url.pathComponents[sources.pathComponents.count + 1]
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
                if let name = regex.firstGroups(in: String(line))?[1] { found.append("\(module).\(name)") }
            }
        }
        return found
    }

    /// Swift source with comments and string literals blanked (newlines kept), so that braces and
    /// words inside them are not read as code. Scanned as UTF-8 bytes, each blanked byte a space:
    /// a scan by Unicode scalars took half a minute over Sources/ in the debug build.
    static func code(_ source: String) -> String {
        let bytes = Array(source.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        func take(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
            index += count
            for _ in 0..<count { out.append(UInt8(ascii: " ")) }
            return true
        }
        func skip(until end: StaticString) {
            // A backslash escapes the next byte inside string literals, not in comments.
            let escapes = end.utf8Start[0] != UInt8(ascii: "*") && end.utf8Start[0] != UInt8(ascii: "\n")
            while index < bytes.count, !take(end) {
                let byte = bytes[index]
                index += 1
                out.append(byte == UInt8(ascii: "\n") ? byte : UInt8(ascii: " "))
                if byte == UInt8(ascii: "\\") && escapes, index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                    index += 1
                    out.append(UInt8(ascii: " "))
                }
            }
        }
        while index < bytes.count {
            if take("//") {
                skip(until: "\n")
                out.append(UInt8(ascii: "\n"))
            } else if take("/*") {
                skip(until: "*/")
            } else if take("#\"\"\"") {
                skip(until: "\"\"\"#")
            } else if take("\"\"\"") {
                skip(until: "\"\"\"")
            } else if take("#\"") {
                skip(until: "\"#")
            } else if take("\"") {
                skip(until: "\"")
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// FILE:LINE of every `public` declaration inside a type that is not public (or an extension
    /// of one): its effective access is the type's, so `public` there says what is not true.
    static func publicMembersOfNonPublicTypes() throws -> [String] {
        let publicTypes = Set(try declared().map { String($0.split(separator: ".").last ?? "") })
        let typeRegex = try NSRegularExpression(
            pattern:
                #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*((?:public|package|internal|private|fileprivate)\s+)?(?:final\s+|indirect\s+)*(struct|enum|class|actor|protocol|extension)\s+([A-Za-z0-9_.]+)"#
        )
        let memberRegex = try NSRegularExpression(pattern: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*public\s"#)
        var found: [String] = []
        let sources = SpecCompletenessTests.packageRoot.appendingPathComponent("Sources")
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let lines = Self.code(try String(contentsOf: url, encoding: .utf8)).split(separator: "\n", omittingEmptySubsequences: false)
            // Open braces: nil for a block that is no type, else whether the type is public.
            var scopes: [Bool?] = []
            for (number, line) in lines.enumerated() {
                var opened: Bool?? = .none
                let text = String(line)
                if let match = typeRegex.firstGroups(in: text) {
                    let kind = match[2] ?? ""
                    let name = String((match[3] ?? "").split(separator: ".").last ?? "")
                    opened = .some(kind == "extension" ? publicTypes.contains(name) : (match[1]?.hasPrefix("public") ?? false))
                } else if memberRegex.firstGroups(in: text) != nil, let enclosing = scopes.last(where: { $0 != nil }), enclosing == false {
                    found.append("\(url.lastPathComponent):\(number + 1)")
                }
                for character in line {
                    if character == "{" {
                        scopes.append(opened ?? nil)
                        opened = .none
                    } else if character == "}" {
                        _ = scopes.popLast()
                    }
                }
            }
        }
        return found.sorted()
    }

    @Test("no public declaration inside a type that is not public")
    func publicMembers() throws {
        let found = try Self.publicMembersOfNonPublicTypes()
        #expect(found == [], "\(found.count): \(found.prefix(20))")
    }

    @Test("the scan sees through comments and strings")
    func scanner() {
        let source = "let a = \"{ // }\" /* { */ + \"\"\"\n}\n\"\"\" // {\nlet b = 1"
        #expect(Self.code(source).filter { $0 == "{" || $0 == "}" }.isEmpty)
        #expect(Self.code(source).split(separator: "\n", omittingEmptySubsequences: false).count == 4)
    }

    /// Every Sources/ file (relative path) with an `@_spi` attribute, and its text. SPI is
    /// public to a client that opts in, so it must not become a way around the count: only the
    /// Benchmarks package's entry points, which forward to package types, are SPI.
    static func spiFiles() throws -> [(path: String, source: String)] {
        var found: [(String, String)] = []
        let sources = SpecCompletenessTests.packageRoot.appendingPathComponent("Sources")
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let source = Self.code(try String(contentsOf: url, encoding: .utf8))
            if source.contains("@_spi(") { found.append((url.pathComponents.dropFirst(sources.pathComponents.count).joined(separator: "/"), source)) }
        }
        return found.sorted { $0.0 < $1.0 }
    }

    @Test("SPI only for the Benchmarks package, in BenchmarkAccess.swift, declaring no type")
    func spi() throws {
        let files = try Self.spiFiles()
        #expect(files.map(\.path) == ["Format/EventCodecs/BenchmarkAccess.swift", "Validation/SchemaValidation/BenchmarkAccess.swift"])
        let name = try NSRegularExpression(pattern: #"@_spi\(([A-Za-z]+)\)"#)
        let type = try NSRegularExpression(pattern: #"(?m)^\s*(?:@\w+(?:\([^)]*\))?\s+)*public (?:final )?(?:struct|enum|class|protocol|actor|typealias) "#)
        for file in files {
            #expect(Set(name.allGroups(in: file.source).compactMap { $0[1] }) == ["Benchmarks"], "\(file.path)")
            #expect(type.firstGroups(in: file.source) == nil, "\(file.path)")
        }
    }

    @Test("every public type is meant as API, and there are at most 56")
    func publicTypes() throws {
        let declared = try Self.declared()
        #expect(declared.count <= 56, "\(declared.count) public types")
        #expect(Set(declared).subtracting(Self.expected).sorted() == [], "public by accident?")
        #expect(Self.expected.subtracting(declared).sorted() == [], "no longer public: remove from the list")
    }
}
