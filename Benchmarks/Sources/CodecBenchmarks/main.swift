import Foundation
import JSONDocument
import EnsembleModel
@_spi(Benchmarks) import EventCodecs
@_spi(Benchmarks) import SchemaValidation

/// Sizes and throughput of the v2 encodings on the same generated events (issue 5): prints a
/// table; never part of the unit tests.

/// A deterministic history: `events` events of `changesPerEvent` object changes over a pool of
/// objects, from 10 stores, with the value kinds real apps use.
func history(events: Int, changesPerEvent: Int) -> [Event] {
    var state: UInt64 = 42
    func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    let stores = (0..<10).map { "7C1F3A2B-\($0)-STORE-\(String(format: "%04X", $0 * 4099))" }
    let ids = (0..<20_000).map { i in
        String(format: "%08X-%04X-4%03X-A%03X-%012X", i * 2_654_435_761 % 0xFFFF_FFFF, i % 0xFFFF, i % 0xFFF, (i * 7) % 0xFFF, i * 104_729)
    }
    var revisions = [String: Int64]()
    return (0..<events).map { index in
        let store = stores[index % stores.count]
        let revision = revisions[store, default: -1] + 1
        revisions[store] = revision
        let changes = (0..<changesPerEvent).map { _ -> ObjectChange in
            let id = ids[Int(next() % UInt64(ids.count))]
            let entity = ["Note", "Tag", "Folder", "Attachment"][Int(next() % 4)]
            let properties: [PropertyChange] = [
                PropertyChange(name: "title", value: .attribute(.string("Title \(next() % 1000)"))),
                PropertyChange(name: "modified", value: .attribute(.date(millisecondsSince1970: 1.7e12 + Double(next() % 1_000_000_000)))),
                PropertyChange(name: "rank", value: .attribute(.integer(Int64(next() % 100_000)))),
                PropertyChange(name: "score", value: .attribute(.double(Double(next() % 10_000) / 100))),
                PropertyChange(name: "folder", value: .toOne(relatedIdentifier: ids[Int(next() % UInt64(ids.count))])),
                PropertyChange(name: "tags", value: .toMany(added: [ids[Int(next() % UInt64(ids.count))]], removed: [])),
            ]
            return ObjectChange(entity: entity, globalIdentifier: id, type: next() % 3 == 0 ? .insert : .update, propertyChanges: properties)
        }
        return Event(
            uniqueIdentifier: "E-\(index)", type: .save, storeIdentifier: store, revision: revision,
            globalCount: Int64(index), timestamp: 6.3e8 + Double(index), otherStoreRevisions: [:], objectChanges: changes)
    }
}

func seconds(_ work: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try work()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func peakMemoryMB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

let events = history(events: 1_000, changesPerEvent: 100)
let changes = events.reduce(0) { $0 + $1.objectChanges.count }
let json = try events.map { try V2JSONEncoder().encode($0) }
let binary = try events.map { try V2BinaryEncoder().encode($0) }
let binaryDeflated = try events.map { try V2BinaryEncoder(deflateSections: true).encode($0) }
// Raw DEFLATE of each JSON file: the container's payload minus its 50-byte header.
let jsonDeflated = json.map { V2BinaryEncoder.dataBlobContainer($0, deflate: true).count - 50 }
let jsonBytes = json.reduce(0) { $0 + $1.count }, binaryBytes = binary.reduce(0) { $0 + $1.count }

var decoded = 0
let jsonDecode = try seconds { for bytes in json { decoded += try V2JSONDecoder().decodeEvent(try JSONParser.parse(bytes)).event.objectChanges.count } }
// Each stage of the v2 JSON reading pipeline timed on its own, file by file (Spec/v2-json.md 2):
// parsing, the schema stage by the generic validator and by the fast check that the reader tries
// first (it falls back to the validator only when the fast check cannot say "valid"), decoding.
var stages = (parse: 0.0, generic: 0.0, fast: 0.0, decode: 0.0)
for bytes in json {
    var value = JSONValue.null
    stages.parse += try seconds { value = try JSONParser.parse(bytes) }
    stages.generic += try seconds { _ = try value.v2EventSchemaViolations() }
    var accepted = false
    stages.fast += seconds { accepted = value.passesV2EventFastCheck }
    precondition(accepted, "the benchmark's events are valid")
    stages.decode += try seconds { decoded += try V2JSONDecoder().decodeEvent(value).event.objectChanges.count }
}
// The reader decodes the usual file straight from its bytes, with the same verdicts; the stages
// above are its fallback for anything with a finding.
let jsonDirect = seconds {
    for bytes in json {
        guard let event = V2JSONDecoder.decodeEventFast(bytes) else { preconditionFailure("the benchmark's events are valid") }
        decoded += event.objectChanges.count
    }
}
let jsonDecodeSchema = stages.parse + stages.generic + stages.decode
let jsonDecodeFast = stages.parse + stages.fast + stages.decode
let binaryDecode = try seconds { for bytes in binary { decoded += try V2BinaryDecoder().decode(bytes).objectChanges.count } }
let binaryDeflatedDecode = try seconds { for bytes in binaryDeflated { decoded += try V2BinaryDecoder().decode(bytes).objectChanges.count } }
let jsonEncode = try seconds { for event in events { _ = try V2JSONEncoder().encode(event) } }
let binaryEncode = try seconds { for event in events { _ = try V2BinaryEncoder().encode(event) } }

func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }

func row(_ name: String, _ bytes: Int, _ decode: Double?, _ encode: Double?) {
    let mb = Double(bytes) / 1_048_576
    let decodeText = decode.map { String(format: "%8.1f MB/s %10.0f changes/s", mb / $0, Double(changes) / $0) } ?? ""
    let encodeText = encode.map { String(format: "%8.1f MB/s", mb / $0) } ?? ""
    print(padded(name, 26) + padded(String(bytes), 12) + padded(decodeText, 36) + encodeText)
}
print("\(events.count) events, \(changes) object changes (each with 6 property changes)")
print(padded("encoding", 26) + padded("bytes", 12) + padded("decode", 36) + "encode")
row("v2 JSON", jsonBytes, jsonDecode, jsonEncode)
row("v2 JSON + generic schema", jsonBytes, jsonDecodeSchema, nil)
row("v2 JSON + fast check", jsonBytes, jsonDecodeFast, nil)
row("v2 JSON direct (reader)", jsonBytes, jsonDirect, nil)
row("v2 JSON deflated", jsonDeflated.reduce(0, +), nil, nil)
row("v2 binary", binaryBytes, binaryDecode, binaryEncode)
row("v2 binary deflated", binaryDeflated.reduce(0) { $0 + $1.count }, binaryDeflatedDecode, nil)
print(
    String(
        format: "binary / JSON size: %.1f%%   binary decode speed-up: %.1fx (%.1fx against JSON with the fast check)",
        100 * Double(binaryBytes) / Double(jsonBytes), jsonDecode / binaryDecode, jsonDecodeFast / binaryDecode))
let megabytes = Double(jsonBytes) / 1_048_576
print(
    String(
        format: "v2 JSON stages: parse %.1f MB/s, generic schema %.1f MB/s, fast check %.1f MB/s, decode %.1f MB/s",
        megabytes / stages.parse, megabytes / stages.generic, megabytes / stages.fast, megabytes / stages.decode))
print(String(format: "peak resident memory: %.0f MB", peakMemoryMB()))
