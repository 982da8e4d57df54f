import Foundation
import Testing
import JSONDocument
import LogToolCore

/// `logtool conformance` as an implementer drives it (Spec/merge.md 9.8, 9.9): every suite
/// passes against this logtool and fails against engines that are wrong, the engine is found
/// from the caller's directory, one that cannot start stops the run, and a failure says what ran,
/// which rule it pins and what was expected.
@Suite("Conformance suites")
struct ConformanceSuiteTests {
    /// A scratch folder, removed when `body` returns.
    static func inScratch<T>(_ body: (URL) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try body(folder)
    }

    /// Writes an executable script.
    static func script(_ text: String, at url: URL, executable: Bool = true) throws {
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: executable ? 0o755 : 0o644], ofItemAtPath: url.path)
    }

    /// The number of cases a suite runs, counted from the fixture files by hand rules (not by
    /// the runner): one per entry, plus the files a suite runs without entries.
    static func expectedCount(_ suite: String) throws -> Int {
        let fixtures = Run.packageRoot.appendingPathComponent("Fixtures")
        func entries(_ path: String, _ member: String = "cases") throws -> Int {
            let data = try Data(contentsOf: fixtures.appendingPathComponent(path))
            return try JSONParser.parse(Array(data))[JSONPointer([member])]?.arrayValue?.count ?? -1
        }
        func files(_ path: String, _ suffix: String) throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent(path).path).filter { $0.hasSuffix(suffix) }.count
        }
        func folders(_ path: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent(path).path).filter { !$0.contains(".") }
        }
        switch suite {
        case "v2-json":
            return try files("v2-json/valid", ".json") + 2 * files("v2-json/canonical", ".input.json") + 1 + entries("v2-json/invalid/cases.json")
                + entries("v2-json/model-invalid/cases.json")
        case "v2-binary":
            return try 2 * files("v2-binary/valid", ".json") + entries("v2-binary/noncanonical/cases.json") + entries("v2-binary/invalid/cases.json")
                + entries("v2-binary/blobs/cases.json") + 2
        case "wrappers": return try entries("wrappers/valid/cases.json") + entries("wrappers/damaged/cases.json")
        case "file-names": return try entries("file-names/cases.json")
        case "models": return try files("models/expected", ".hash.json") + entries("models/broken/cases.json")
        case "v1-json":
            return try 2 * entries("v1-json/valid/cases.json") + entries("v1-json/invalid/cases.json") + entries("v1-json/convert-refused/cases.json")
                + entries("v1-json/originals.json", "originals")
        case "verify": return try folders("verify").count
        case "merge": return try folders("merge").filter { !$0.hasPrefix("device-") }.count
        case "device": return try folders("merge").filter { $0.hasPrefix("device-") }.count
        default: return -1
        }
    }

    static let suites = ["v2-json", "v2-binary", "wrappers", "file-names", "models", "v1-json", "verify", "merge", "device"]

    /// This logtool's commands run in the test process, as `cd FOLDER && logtool COMMAND ARGS`
    /// runs them: an argument naming a file or folder inside the case folder is given as an
    /// absolute path, and the folder's path is taken out of what the command writes again, so the
    /// outputs read as from inside the folder. (Not `chdir`: other tests run in this process at
    /// the same time.) A process per case cost about 40 s of the test run.
    static let inProcess = ConformanceRunner.Engine.function { command, arguments, folder in
        let prefix = folder.path + "/"
        let absolute = arguments.map { argument in
            !argument.hasPrefix("-") && !argument.hasPrefix("/") && FileManager.default.fileExists(atPath: prefix + argument) ? prefix + argument : argument
        }
        let run = LogTool.runCapturingBytes(arguments: [command] + absolute)
        func relative(_ data: Data) -> Data {
            let needle = Data(prefix.utf8)
            var result = Data()
            var rest = data[...]
            while let found = rest.firstRange(of: needle) {
                result += rest[..<found.lowerBound]
                rest = rest[found.upperBound...]
            }
            return result + rest
        }
        return (run.status, relative(run.stdout), relative(run.stderr))
    }

    @Test("every suite passes against this logtool, every case of it (in process)", arguments: suites)
    func suitePasses(suite: String) throws {
        let run = try Self.failures(of: suite, with: Self.inProcess)
        let failures = run.failures.compactMap { $0 }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        let count = try Self.expectedCount(suite)
        #expect(count > 0)
        #expect(run.cases == count)
    }

    /// The cases of `suite` in the kit and what each gives with `engine`: nil when it passes.
    static func failures(of suite: String, with engine: ConformanceRunner.Engine) throws -> (cases: Int, failures: [String?]) {
        let family = try #require(ConformanceSuite(rawValue: suite))
        let cases = try #require(family.cases(in: Run.packageRoot.appendingPathComponent("Fixtures/\(family.folderName)")))
        let runner = ConformanceRunner(engine: engine)
        return (
            cases.count,
            cases.map { testCase in
                let differences = runner.differences(testCase)
                return differences.isEmpty ? nil : "FAIL \(testCase.name)\n  " + differences.joined(separator: "\n  ")
            }
        )
    }

    @Test("an engine that only exits 0 fails every case of every suite (in process, as `--engine true`)", arguments: suites)
    func suiteFails(suite: String) throws {
        let run = try Self.failures(of: suite, with: .function { _, _, _ in (0, Data(), Data()) })
        #expect(run.failures.allSatisfy { $0 != nil })
        #expect(run.cases == (try Self.expectedCount(suite)))
    }

    @Test("an engine that only exits 0 fails the cases from the command line too")
    func suiteFailsFromTheCommandLine() throws {
        let run = try Run("conformance", "--suite", "v2-binary", "--engine", "true")
        #expect(run.status == 1)
        let count = try Self.expectedCount("v2-binary")
        #expect(run.stdout.hasSuffix("\n0 passed, \(count) failed\n"), "\(run.stdout.suffix(300))")
    }

    /// An engine that runs this logtool, taking the arguments of `merge` or of `kit`, and
    /// reverses the first list of two or more property changes of every event it decodes from
    /// a binary file: one field read in the wrong order, everything else right.
    static func misorderingEngine(in folder: URL) throws -> URL {
        let engine = folder.appendingPathComponent("misordering-engine.py")
        try script(
            """
            import json, subprocess, sys
            args = sys.argv[1:]
            kit = args[:1] in (['decode'], ['encode'], ['blob'], ['unwrap'], ['file-name'], ['model'])
            run = subprocess.run(['\(Run.binary.path)'] + (['kit'] if kit else ['merge']) + args, capture_output=True)
            out = run.stdout
            if kit and args[0] == 'decode' and '--binary' in args and run.returncode == 0:
                event = json.loads(out)
                def reverse_first(value):
                    if isinstance(value, dict):
                        props = value.get('properties')
                        if isinstance(props, list) and len(props) >= 2:
                            props.reverse()
                            return True
                        return any(reverse_first(v) for v in value.values())
                    if isinstance(value, list):
                        return any(reverse_first(v) for v in value)
                    return False
                if reverse_first(event):
                    out = (json.dumps(event, separators=(',', ':'), ensure_ascii=False) + '\\n').encode()
            sys.stdout.buffer.write(out)
            sys.stderr.buffer.write(run.stderr)
            sys.exit(run.returncode)
            """, at: engine)
        return engine
    }

    @Test("an engine that passes the merge suite but reads one binary field in the wrong order fails --suite v2-binary")
    func misorderedBinaryField() throws {
        try Self.inScratch { folder in
            let engine = try Self.misorderingEngine(in: folder)
            // Its merges are logtool's, unchanged, so it passes the merge suite as logtool does
            // (MergeFixtureTests runs the whole suite with a logtool process per case); two
            // cases show the wrapper hands them through (all of them took a minute here).
            let merge = try Run(
                arguments: [
                    "conformance", "--suite", "merge", "--case", "double-insert", "--case", "revision-gap-200", "--engine", "python3 misordering-engine.py",
                ],
                in: folder)
            #expect(merge.status == 0, "\(merge.stdout)")
            #expect(merge.stdout == "PASS double-insert\nPASS revision-gap-200\n2 passed, 0 failed\n", "\(merge.stdout)")
            // The valid events, and those of the invalid ones whose names start with b (the
            // errors pass through the wrapper alike; the whole suite took a minute here).
            let binary = try Run(
                arguments: [
                    "conformance", "--suite", "v2-binary", "--case", "valid/*", "--case", "invalid/b*", "--engine", "python3 \(engine.lastPathComponent)",
                ],
                in: folder)
            #expect(binary.status == 1)
            // example-1 has Note n1's properties pages, title (v2-binary.md 13.1): read reversed.
            #expect(
                binary.stdout.contains(
                    """
                    FAIL valid/example-1.bin
                      command: cd \(Run.packageRoot.path)/Fixtures/v2-binary/valid && python3 \(engine.path) decode --binary example-1.bin
                      rule: v2-binary.md 13 (worked example, read)
                      at /changesByEntity/Note/0/properties/0/propertyName: expected "pages", got "title"
                    """), "\(binary.stdout)")
            // Only decoded events with two properties in one change fail; encoding, errors and
            // blobs still pass.
            #expect(binary.stdout.contains("PASS valid/example-1.json\n"))
            #expect(binary.stdout.contains("PASS invalid/bad-magic.bin\n"))
            #expect(!binary.stdout.contains("FAIL invalid/"))
        }
    }

    @Test("a relative engine path is found from the caller's directory, also as a later word")
    func relativeEngine() throws {
        try Self.inScratch { folder in
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("bin"), withIntermediateDirectories: false)
            try Self.script("#!/bin/sh\nexec '\(Run.binary.path)' merge \"$@\"\n", at: folder.appendingPathComponent("bin/my-merge"))
            for engine in ["./bin/my-merge", "bin/my-merge", "sh bin/my-merge", "sh ./bin/my-merge"] {
                let run = try Run(arguments: ["conformance", "--engine", engine, "--case", "revision-gap-200", "--case", "double-insert"], in: folder)
                #expect(run.status == 0, "\(engine): \(run.stdout)\(run.stderr)")
                #expect(run.stdout == "PASS double-insert\nPASS revision-gap-200\n2 passed, 0 failed\n", "\(engine)")
            }
        }
    }

    @Test("an engine that cannot be started stops the run at once with one error")
    func engineCannotStart() throws {
        try Self.inScratch { folder in
            try Self.script("#!/bin/sh\nexit 0\n", at: folder.appendingPathComponent("not-executable"), executable: false)
            let missing = try Run(arguments: ["conformance", "--engine", "./missing-engine"], in: folder)
            #expect(missing.status == 2)
            #expect(missing.stdout == "")
            #expect(
                missing.stderr == "conformance.engine-unavailable: the engine ./missing-engine cannot be started: no such file "
                    + "(\(folder.path)/missing-engine)\n")
            let plain = try Run(arguments: ["conformance", "--suite", "v2-json", "--engine", "not-executable"], in: folder)
            #expect(plain.status == 2)
            #expect(plain.stderr == "conformance.engine-unavailable: the engine not-executable cannot be started: not found on PATH\n")
            let notExecutable = try Run(arguments: ["conformance", "--engine", "./not-executable --flag"], in: folder)
            #expect(notExecutable.status == 2)
            #expect(
                notExecutable.stderr
                    == "conformance.engine-unavailable: the engine ./not-executable cannot be started: not an executable file "
                    + "(\(folder.path)/not-executable)\n")
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("bin"), withIntermediateDirectories: false)
            let folderEngine = try Run(arguments: ["conformance", "--engine", "./bin"], in: folder)
            #expect(folderEngine.status == 2)
            #expect(folderEngine.stderr == "conformance.engine-unavailable: the engine ./bin cannot be started: not an executable file (\(folder.path)/bin)\n")
            // Quoted, so only the shell can tell: its 127 at the first case ends the run.
            let quoted = try Run(arguments: ["conformance", "--engine", "'./missing engine'"], in: folder)
            #expect(quoted.status == 2)
            #expect(quoted.stdout == "")
            #expect(quoted.stderr.hasPrefix("conformance.engine-unavailable: the engine cannot be started (exit status 127): "), "\(quoted.stderr)")
            #expect(quoted.stderr.split(separator: "\n").count == 1, "\(quoted.stderr)")
        }
    }

    @Test("--case runs the cases a name or pattern names, and a pattern that names none is an error")
    func caseSelection() throws {
        let device = try Run("conformance", "--case", "device-*")
        #expect(device.status == 0, "\(device.stdout)")
        let names = device.stdout.split(separator: "\n").dropLast().map(String.init)
        #expect(names.count == (try Self.expectedCount("device")))
        #expect(names.allSatisfy { $0.hasPrefix("PASS device-") }, "\(names)")
        let two = try Run("conformance", "--suite", "v2-binary", "--case", "invalid/bad-magic.bin", "--case", "valid/example-?.json")
        #expect(two.status == 0)
        #expect(
            two.stdout
                == "PASS valid/example-1.json\nPASS valid/example-2.json\nPASS valid/example-3.json\nPASS valid/example-4.json\nPASS valid/example-5.json\nPASS invalid/bad-magic.bin\n6 passed, 0 failed\n"
        )
        let none = try Run("conformance", "--case", "double-insert", "--case", "no-such-*")
        #expect(none.status == 1)
        #expect(none.stdout == "PASS double-insert\nerror: --case no-such-* matches no case\n1 passed, 1 failed\n")
    }

    @Test("--timeout stops an engine that runs too long, and the case fails saying so")
    func timeout() throws {
        let started = Date()
        let run = try Run("conformance", "--engine", "sleep 60 #", "--timeout", "1", "--case", "double-insert")
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(run.status == 1)
        #expect(
            run.stdout == """
                FAIL double-insert
                  command: cd \(Run.packageRoot.path)/Fixtures/merge/double-insert && sleep 60 # cloud
                  rule: merge.md 8.2 (an insert of a live object attaches), 8.3.4 (an insert replaces a to-many), 9.1
                  stopped: still running after 1 s (--timeout)
                0 passed, 1 failed

                """)
        #expect(try Run("conformance", "--timeout", "0").status == 2)
        #expect(try Run("conformance", "--timeout", "-3").status == 2)
    }

    @Test("a failure says the command, the rule, and expected versus actual")
    func failureShape() throws {
        let run = try Run("conformance", "--engine", "echo '{\"entities\":{}}' #", "--case", "double-insert", "--case", "revision-gap-200")
        #expect(run.status == 1)
        let merge = Run.packageRoot.path + "/Fixtures/merge"
        // By hand from the two cases' case.json, expected/state.json and expected/error.json.
        #expect(
            run.stdout == """
                FAIL double-insert
                  command: cd \(merge)/double-insert && echo '{"entities":{}}' # cloud
                  rule: merge.md 8.2 (an insert of a live object attaches), 8.3.4 (an insert replaces a to-many), 9.1
                  at /entities/Item: missing, expected {"d1":{"count":1,"links":["l3"],"title":"fromB"}}
                  at /entities/Link: missing, expected {"l1":{},"l2":{},"l3":{"label":"b"}}
                FAIL revision-gap-200
                  command: cd \(merge)/revision-gap-200 && echo '{"entities":{}}' # cloud
                  rule: merge.md 5.4 (200)
                  exit status 0, expected 1
                  expected: findings of expected/error.json:
                  expected:   merge.revision-gap (200) ["cloud/E/events/3_A_3.cdeevent"] {store="A", first="2", last="2"}
                  expected:   merge.revision-gap (200) ["cloud/E/events/7_C_5.cdeevent"] {store="C", first="3", last="4"}
                  expected:   merge.revision-gap (200) ["cloud/E/events/8_C_8.cdeevent"] {store="C", first="6", last="7"}
                  actual standard output: {"entities":{}}
                  actual standard error: empty
                0 passed, 2 failed

                """)
        let json = try Run("conformance", "--engine", "echo '{\"entities\":{}}' #", "--case", "revision-gap-200", "--json")
        let report = try JSONParser.parse(Array(json.stdout.utf8))
        #expect(report[JSONPointer(["cases", "0", "command"])] == .string("cd \(merge)/revision-gap-200 && echo '{\"entities\":{}}' # cloud"))
        #expect(report[JSONPointer(["cases", "0", "rule"])] == .string("merge.md 5.4 (200)"))
        #expect(report[JSONPointer(["suite"])] == .null)
    }

    @Test("a failing file-format case names its entry's rule and the first error expected")
    func fileFormatFailureShape() throws {
        // An engine that refuses everything with one made-up error.
        let engine = "echo '{\"errors\":[{\"code\":\"x.made-up\",\"offset\":null,\"pointer\":null}]}'; exit 1; #"
        let run = try Run("conformance", "--suite", "v2-binary", "--engine", engine, "--case", "invalid/bad-magic.bin")
        #expect(
            run.stdout == """
                FAIL invalid/bad-magic.bin
                  command: cd \(Run.packageRoot.path)/Fixtures/v2-binary/invalid && \(engine) decode --binary bad-magic.bin
                  rule: v2-binary.md 12 (binary.bad-magic)
                  first error's code: expected "binary.bad-magic", got "x.made-up"
                  first error's offset: expected 0, got null
                  first error: {"code":"x.made-up","offset":null,"pointer":null}
                0 passed, 1 failed

                """)
    }
}
