import Foundation
import Testing
import JSONDocument

/// Runs every `Fixtures/merge/<case>/` as another implementation's runner would: the command of
/// `test_case_info.json`, run in the case folder, against `expected/state.json` (exit 0) or the
/// codes of `expected/errors.json` (exit 1).
@Suite("Merge fixtures")
struct MergeFixtureTests {
    static let root = Run.packageRoot.appendingPathComponent("Fixtures/merge")
    static let cases: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
        .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent($0).appendingPathComponent("test_case_info.json").path) }
        .sorted()

    @Test("there are merge fixture cases")
    func present() {
        #expect(Self.cases.count >= 12)
    }

    @Test("each case gives the expected state or the expected integrity errors", arguments: cases)
    func run(caseName: String) throws {
        let folder = Self.root.appendingPathComponent(caseName)
        let info = try JSONParser.parse(try Data(contentsOf: folder.appendingPathComponent("test_case_info.json")))
        let command = info[JSONPointer(["command"])]?.arrayValue?.compactMap(\.stringValue) ?? []
        let expectedStatus = info[JSONPointer(["exitCode"])]?.numberValue?.int64Value ?? 0
        let run = try Run(arguments: command, in: folder)
        #expect(Int64(run.status) == expectedStatus, "\(caseName): \(run.stderr)")
        if expectedStatus == 0 {
            let expected = try Data(contentsOf: folder.appendingPathComponent("expected/state.json"))
            #expect(run.stdout == String(decoding: expected, as: UTF8.self) + "\n", "\(caseName)")
        } else {
            #expect(run.stdout.isEmpty)
            let expected = try JSONParser.parse(try Data(contentsOf: folder.appendingPathComponent("expected/errors.json")))
            for error in expected[JSONPointer(["errors"])]?.arrayValue ?? [] {
                let code = error[JSONPointer(["code"])]?.stringValue ?? "?"
                #expect(run.stderr.contains(code), "\(caseName): \(code) not reported in \(run.stderr)")
                if let number = error[JSONPointer(["number"])]?.numberValue?.int64Value {
                    #expect(run.stderr.contains("\(code) (\(number))"), "\(caseName)")
                }
            }
        }
    }
}
