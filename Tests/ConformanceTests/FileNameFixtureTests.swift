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

    @Test("each name is classified as the manifest says", arguments: cases.indices)
    func classify(index: Int) throws {
        let testCase = Self.cases[index]
        let folder = try #require(testCase["folder"]?.stringValue.flatMap(EnsembleSubfolder.init(rawValue:)))
        let name = try #require(testCase["name"]?.stringValue)
        let entry = CloudFileName.classify(name: name, in: folder, size: 100)
        #expect(Self.describe(entry) == testCase["expect"], "\(folder.rawValue)/\(name)")
    }
}
