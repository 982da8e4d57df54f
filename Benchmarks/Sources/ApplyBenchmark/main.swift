import Foundation
import DataModel
import EnsembleModel
@_spi(Benchmarks) import EventCodecs
import JSONDocument
import MergeEngine

// Times the engine's apply path alone (Spec/merge.md 8) on a generated folder: every event of
// `cloud/<ensemble>/events` is decoded first, then applied in replay order three times, each
// into a fresh state; the merge command overlaps the same work with reading.
//
//   swift run -c release --package-path Benchmarks ApplyBenchmark /tmp/g   (made by `logtool generate /tmp/g ...`)

func seconds(_ work: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try work()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

let arguments = CommandLine.arguments.dropFirst()
guard let folder = arguments.first, arguments.count <= 2, let runs = arguments.dropFirst().first.map({ Int($0) }) ?? 3, runs > 0 else {
    print("usage: ApplyBenchmark FOLDER [RUNS] (a folder made by logtool generate; RUNS, 3 unless given, is how many times it is applied)")
    exit(2)
}
let root = URL(fileURLWithPath: folder)
let model = try ModelBundle(path: root.appendingPathComponent("Model.xcdatamodeld").path).load()
let cloud = root.appendingPathComponent("cloud")
let ensembles = try FileManager.default.contentsOfDirectory(atPath: cloud.path).filter { !$0.hasPrefix(".") }
var events: [Event] = []
var bytesRead = 0
let decodeSeconds = try seconds {
    for ensemble in ensembles {
        let directory = cloud.appendingPathComponent(ensemble).appendingPathComponent("events")
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".cdeevent") {
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            bytesRead += bytes.count
            if let event = V2JSONDecoder.decodeEventFast(bytes) {
                events.append(event)
            } else {
                events.append(try V2BinaryDecoder().decode(bytes))
            }
        }
    }
}
// The replay order of Spec/merge.md 6: global count, timestamp, store (UTF-8 bytes), revision.
events.sort { x, y in
    if x.globalCount != y.globalCount { return x.globalCount < y.globalCount }
    if x.timestamp != y.timestamp { return x.timestamp < y.timestamp }
    if x.storeIdentifier != y.storeIdentifier { return utf8Precedes(x.storeIdentifier, y.storeIdentifier) }
    return x.revision < y.revision
}
let replayed = events.filter { $0.type == .save || $0.type == .merge }
let changes = replayed.reduce(0) { $0 + $1.objectChanges.count }
let properties = replayed.reduce(0) { $0 + $1.objectChanges.reduce(0) { $0 + $1.propertyChanges.count } }
print(
    "\(replayed.count) events, \(changes) object changes, \(properties) property changes, \(bytesRead) bytes decoded in \(String(format: "%.2f", decodeSeconds)) s"
)
var times: [Double] = [], writeTimes: [Double] = []
var state = StoreState(model: model)
for _ in 0..<runs {
    state = StoreState(model: model)
    times.append(seconds { for event in replayed { state.apply(event) } })
    writeTimes.append(try seconds { try state.writeDocument { _ in } })
}
let best = times.min() ?? 0
print(
    String(
        format: "apply: best %.2f s (%.0f changes/s, %.0f ns per property change), runs %@; write the state: best %.3f s, runs %@; %d live objects",
        best, Double(changes) / best, best * 1e9 / Double(max(1, properties)), times.map { String(format: "%.2f", $0) }.joined(separator: ", "),
        writeTimes.min() ?? 0, writeTimes.map { String(format: "%.3f", $0) }.joined(separator: ", "), state.liveObjectCount))
