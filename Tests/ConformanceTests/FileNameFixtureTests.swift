import Testing
import JSONDocument
import CloudFolder

@Suite("File-name fixtures")
struct FileNameFixtureTests {
    static let cases = Fixtures.cases("file-names/cases.json")

    /// The classification as the manifest spells it.
    static func describe(_ entry: CloudEntry) -> JSONValue {
        func part(_ number: PartNumber?) -> JSONValue {
            number.map { .object(JSONObject([("index", JSONValue(Int64($0.index))), ("count", JSONValue(Int64($0.count)))])) } ?? .null
        }
        switch entry {
        case .event(let name):
            return .object(
                JSONObject([
                    ("kind", .string("event")), ("globalCount", JSONValue(name.globalCount)),
                    ("store", .string(name.storeIdentifier)), ("revision", JSONValue(name.revision)),
                    ("part", part(name.part)),
                ]))
        case .baseline(let name):
            var members: [(String, JSONValue)] = [
                ("kind", .string(name.isLegacyName ? "legacyBaseline" : "baseline")),
                ("globalCount", JSONValue(name.globalCount)),
                ("uniqueIdentifier", .string(name.uniqueIdentifier)), ("part", part(name.part)),
            ]
            if let prefix = name.storePrefix { members.append(("storePrefix", .string(prefix))) }
            return .object(JSONObject(members))
        case .storeRegistration(let store):
            return .object(JSONObject([("kind", .string("store")), ("store", .string(store))]))
        case .dataFile(let name):
            return .object(JSONObject([("kind", .string("dataFile")), ("name", .string(name))]))
        case .debris(let kind, _):
            return .object(JSONObject([("kind", .string("debris")), ("debris", .string(kind.rawValue))]))
        }
    }

    @Test("there are enough cases, including the 8-digit revision the original misreads")
    func coverage() {
        #expect(Self.cases.count >= 30)
        #expect(Self.cases.contains { $0["name"] == .string("12_A_12345678.cdeevent") && $0["folder"] == .string("events") })
    }

    /// Names whose `_`, `.`, `(` or digits sit next to a combining mark (U+0301), by hand from
    /// Spec/cloud-layout.md 4.1 and 7, whose rules are over Unicode scalar values: the mark is a
    /// scalar of its own, so it neither hides the delimiter before it nor joins a number.
    static let scalarCases: [(EnsembleSubfolder, String, String)] = [
        (.events, "1_\u{301}A_0.cdeevent", #"{"kind":"event","globalCount":1,"store":"\u0301A","revision":0,"part":null}"#),
        (.events, "1_A\u{301}_0.cdeevent", #"{"kind":"event","globalCount":1,"store":"A\u0301","revision":0,"part":null}"#),
        (.events, "1_A_0\u{301}.cdeevent", #"{"kind":"debris","debris":"unknownName"}"#),
        (.events, "1_A_0.cdeevent\u{301}", #"{"kind":"debris","debris":"unknownName"}"#),
        (
            .baselines, "2_U_\u{301}1234567.cdeevent",
            #"{"kind":"baseline","globalCount":2,"uniqueIdentifier":"U","part":null,"storePrefix":"\u03011234567"}"#
        ),
        (.stores, "A_\u{301}", #"{"kind":"debris","debris":"unknownName"}"#),
        (.events, ".\u{301}7_A_3.cdeevent.icloud", #"{"kind":"debris","debris":"iCloudPlaceholder"}"#),
        (.events, "7_A_3 (\u{301}1).cdeevent", #"{"kind":"debris","debris":"conflictedCopy"}"#),
        (.events, "._\u{301}7_A_3.cdeevent", #"{"kind":"debris","debris":"systemFile"}"#),
    ]

    @Test("names are matched over Unicode scalar values, not characters", arguments: scalarCases.indices)
    func scalars(index: Int) {
        let (folder, name, expected) = Self.scalarCases[index]
        #expect(
            Self.describe(CloudFileName.classify(name: name, in: folder, size: 100)) == (try? JSONParser.parse(expected)),
            "\(folder.rawValue)/\(name.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test("each name is classified as the manifest says", arguments: cases.indices)
    func classify(index: Int) throws {
        let testCase = Self.cases[index]
        let folder = try #require(testCase["folder"]?.stringValue.flatMap(EnsembleSubfolder.init(rawValue:)))
        let name = try #require(testCase["name"]?.stringValue)
        let entry = CloudFileName.classify(name: name, in: folder, size: 100)
        #expect(Self.describe(entry) == testCase["expect"], "\(folder.rawValue)/\(name)")
    }
}
