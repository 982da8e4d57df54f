import Foundation
import EnsemblesToolkit

// What `logtool repair` would do to a cloud folder (Spec/repair.md 3), without doing it: each
// action's code and the files it moves into the quarantine, relative to the cloud root.
let folder = CommandLine.arguments.dropFirst().first ?? "Fixtures/repair/fold-and-quarantine/cloud"
do {
    let plan = try Ensemble(at: URL(fileURLWithPath: folder)).repairPlan()
    let root = plan.cloudRoot.standardizedFileURL.path + "/"
    for action in plan.actions {
        let files = action.quarantine.map { $0.standardizedFileURL.path.replacingOccurrences(of: root, with: "") }
        print("\(action.code) \(files.joined(separator: ","))")
    }
    print("errors \(plan.errorsBefore) left \(plan.errorsLeft.count)")
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
