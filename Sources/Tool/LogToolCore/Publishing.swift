import Foundation
import EnsemblesToolkit
import TemporaryFiles

/// Publishes a command's staged output file at `destination` (the user's `path`), reporting a
/// destination that appeared meanwhile with the command's `existsCode` (usage error, exit 2) and
/// any other failure with `what` and exit status `failure` (Spec/README.md 6.1).
func publishOutput(
    _ staged: URL, at destination: URL, path: String, replacing: Bool, what: String, existsCode: FormatError.Code, failure: ExitStatus
) throws {
    do {
        try TemporaryFiles.publish(staged, at: destination, replacing: replacing)
    } catch {
        switch error {
        case .destinationExists:
            writeStandardError("\(existsCode): \(escaped(path)): appeared while \(what) was written; give --force to replace it")
            throw ToolExit(status: .usage)
        case .failed(let reason):
            writeStandardError("logtool: \(escaped(path)): could not write \(what): \(reason)")
            throw ToolExit(status: failure)
        }
    }
}
