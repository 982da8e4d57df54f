import Testing
import JSONDocument
import MergeEngine

/// The finding-line grammar of Spec/merge.md 5.9: what merge writes, the conformance runner
/// reads back exactly.
@Suite("Finding lines")
struct FindingLineTests {
    static func problem(_ code: String, _ number: Int?, _ files: [String], _ details: [(String, JSONValue)]) -> IntegrityProblem {
        IntegrityProblem(
            code: FormatError.Code(code), number: number, files: files, message: "a message: with, separators\nand a line feed",
            details: JSONObject(details))
    }

    @Test(
        "lines as the Spec's examples write them",
        arguments: [
            (
                problem(
                    "merge.revision-gap", 200, ["Shop/events/9_A_6.cdeevent"],
                    [("store", .string("A")), ("first", JSONValue(Int64(4))), ("last", JSONValue(Int64(5)))]),
                #"merge.revision-gap (200) Shop/events/9_A_6.cdeevent [store=A, first=4, last=5]: "#
            ),
            (
                problem("merge.incomplete-data", 203, ["a b/1_A_0_1of3.cdeevent", "a b/1_A_0_3of3.cdeevent"], []),
                #"merge.incomplete-data (203) a b/1_A_0_1of3.cdeevent, a b/1_A_0_3of3.cdeevent: "#
            ),
            (
                problem("merge.missing-dependency", 201, ["extra/e, f.cdeevent"], [("store", .string("line\nfeed")), ("revision", JSONValue(Int64(5)))]),
                #"merge.missing-dependency (201) "extra/e, f.cdeevent" [store="line\nfeed", revision=5]: "#
            ),
            (
                problem("json.syntax", nil, ["(200)", " lead", "x]y", "q\"uote"], [("pointer", .string(""))]),
                #"json.syntax "(200)", " lead", "x]y", "q\"uote" [pointer=""]: "#
            ),
            (problem("merge.event-store", nil, [], []), #"merge.event-store: "#),
        ] as [(IntegrityProblem, String)])
    func render(problem: IntegrityProblem, prefix: String) throws {
        let line = FindingLine.render(problem)
        #expect(line.hasPrefix(prefix), "\(line)")
        #expect(!line.contains("\n"))
        let parsed = try #require(FindingLine.parse(line))
        #expect(parsed.code == problem.code.rawValue)
        #expect(parsed.number == problem.number)
        #expect(parsed.files == problem.files)
        #expect(parsed.details.map(\.name) == problem.details.keys)
        #expect(parsed.details.map(\.value) == problem.details.map { FindingLine.text(of: $0.value) })
    }

    @Test(
        "lines that break the grammar do not parse",
        arguments: [
            "logtool: something failed",
            "merge.revision-gap (200) a.cdeevent [store=A",
            "merge.revision-gap (200) a.cdeevent",
            "Merge.Gap x: y",
            "merge.revision-gap (200) \"unterminated: x",
        ])
    func rejected(line: String) {
        #expect(FindingLine.parse(line) == nil)
    }
}
