import Foundation
import EnsemblesToolkit

// Merges a cloud folder (an ensemble folder, or a root holding one) and prints its state.
let folder = CommandLine.arguments.dropFirst().first ?? "Fixtures/merge/baseline-covers/cloud/E"
do {
    let state = try Ensemble(at: URL(fileURLWithPath: folder)).merge()
    print(String(decoding: try state.documentBytes(), as: UTF8.self))
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
