import Foundation
import EnsemblesToolkit

// The folder as one device sees it (Spec/merge.md 15): what it does, and each finding that holds
// an event back, with the file it holds back.
let arguments = Array(CommandLine.arguments.dropFirst())
let folder = arguments.first ?? "Fixtures/merge/device-held-back/cloud/E"
let store = arguments.dropFirst().first ?? "STORE-AA"
do {
    var warnings: [FormatError] = []
    // Inputs as given, so that findings name files as the user wrote the folder.
    let view = try Ensemble(inputs: [folder]).integrate(as: store, warnings: &warnings)
    print("\(view.store) \(view.outcome)")
    for finding in view.findings {
        print("\(finding.code.rawValue) \(finding.files.joined(separator: ","))")
    }
    exit(view.integratesEverything ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
