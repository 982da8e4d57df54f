import Foundation
import Testing
import JSONDocument

/// The golden merge cases of `Fixtures/merge`, through `logtool conformance` as another
/// implementation would run them: against this engine, and against it as an external command.
@Suite("Merge fixtures")
struct MergeFixtureTests {
    static let root = Run.packageRoot.appendingPathComponent("Fixtures/merge")
    static var caseCount: Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent($0).appendingPathComponent("case.json").path) }
            .count
    }

    @Test("every case passes against this engine")
    func builtIn() throws {
        #expect(Self.caseCount >= 38)
        let run = try Run("conformance")
        #expect(run.status == 0, "\(run.stdout)")
        #expect(run.stdout.hasSuffix("\(Self.caseCount) passed, 0 failed\n"))
    }

    @Test("every case passes when the engine is given as an external command")
    func external() throws {
        let run = try Run("conformance", "--engine", "'\(Run.binary.path)' merge")
        #expect(run.status == 0, "\(run.stdout)")
        #expect(run.stdout.hasSuffix("\(Self.caseCount) passed, 0 failed\n"))
    }

    @Test("a wrong engine fails every case with a readable difference")
    func wrongEngine() throws {
        let run = try Run("conformance", "--engine", "echo '{\"entities\":{}}' #")
        #expect(run.status == 1)
        #expect(run.stdout.contains("FAIL original-IntegratorMergeTestsFixture"))
        #expect(run.stdout.contains("at /entities/Parent: missing"))
        #expect(run.stdout.hasSuffix("0 passed, \(Self.caseCount) failed\n") || run.stdout.contains(" failed\n"))
    }
}
