import Foundation
import Testing
import JSONDocument
import LogToolCore
import EnsemblesToolkit
import TestSupport

/// Runs each `Fixtures/folders/<case>/` the way another implementation's runner would:
/// the command of `test_case_info.json`, compared with `expected/`.
@Suite("Folder fixtures")
struct FolderFixtureTests {
    static let caseNames = Fixtures.files(in: "folders")

    @Test("inspect --json reports what the expected document says", arguments: caseNames)
    func inspect(caseName: String) throws {
        let info = try Fixtures.json("folders/\(caseName)/test_case_info.json")
        let command = info["command"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(command.first == "inspect")
        let input = command.last ?? "cloud"
        let report = try Ensemble(at: Fixtures.url("folders/\(caseName)/\(input)")).inspect()
        let expected = try Fixtures.json("folders/\(caseName)/expected/inspect.json")
        let actual = withoutProse(report)
        if actual != withoutProse(expected) {
            Issue.record(
                """
                \(caseName): inspect output differs from expected/inspect.json.
                actual:
                \(JSONWriter(layout: .pretty).string(actual))
                """)
        }
    }
}
