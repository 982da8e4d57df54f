import Foundation
import EnsemblesToolkit
import TemporaryFiles

extension FormatError.Code {
    /// A file a command writes, or standard output, could not be written (Spec/README.md 7.4).
    static let fileWriteFailed = Self("file.write-failed")
    /// `convert SOURCE -` where SOURCE converts to a folder (Spec/convert.md 1).
    static let convertStandardOutput = Self("convert.standard-output")
}

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
            writeErrors([FormatError(existsCode, "appeared while \(what) was written; give --force to replace it", location: .init(file: path))])
            throw ToolExit(status: .usage)
        case .failed(let reason):
            writeErrors([FormatError(.fileWriteFailed, "could not write \(what): \(reason)", location: .init(file: path))])
            throw ToolExit(status: failure)
        }
    }
}

/// Writes a command's output file `path` as Spec/README.md 6.1 says: into a temporary file beside
/// it, flushed, then published (never over a file that appeared meanwhile unless `replacing`).
/// A failure is one error (`file.write-failed`, exit 1; a destination that appeared, `existsCode`,
/// exit 2).
func writeOutputFile(_ content: Data, to path: String, replacing: Bool, what: String, existsCode: FormatError.Code, json: Bool) throws {
    let destination = URL(fileURLWithPath: path).standardizedFileURL
    let temporary = TemporaryFiles.reserveSibling(of: destination)
    defer { TemporaryFiles.release(temporary) }
    do {
        let handle = try TemporaryFiles.openFile(temporary)
        defer { try? handle.close() }
        try handle.write(contentsOf: content)
        try handle.synchronize()
    } catch {
        writeErrors([FormatError(.fileWriteFailed, "\(what) could not be written: \(error.localizedDescription)", location: .init(file: path))], json: json)
        throw ToolExit(status: .problemsFound)
    }
    try publishOutput(temporary, at: destination, path: path, replacing: replacing, what: what, existsCode: existsCode, failure: .problemsFound)
}
