import Foundation
import EnsemblesToolkit

// Verifies a cloud folder (Spec/verify.md) and prints one line per finding: severity, code, files.
let folder = CommandLine.arguments.dropFirst().first ?? "Fixtures/verify/revision-gap/cloud"
do {
    var errors = 0
    for ensemble in try Ensemble(at: URL(fileURLWithPath: folder)).verify() {
        for finding in ensemble.diagnostics {
            print("\(ensemble.identifier) \(finding.severity.rawValue) \(finding.code.rawValue) \(finding.files.joined(separator: ","))")
            if finding.severity == .error { errors += 1 }
        }
    }
    exit(errors == 0 ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
