import ArgumentParser
import Foundation
import EnsemblesToolkit
import TemporaryFiles

/// `logtool timeline`: a folder's history as one self-contained web page (Spec/timeline.md).
struct Timeline: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        abstract: "Draw a cloud folder's history as one self-contained HTML page (Spec/timeline.md).",
        discussion: """
            One lane per store, a mark per event and baseline, and every finding of verify placed \
            where it happens (with --as-store, device mode's held-back events too). The page needs \
            no network; it reads without JavaScript. Exit status: 0 written, 1 the page could not be \
            written, 2 usage error.

            Examples:
              logtool timeline cloud/MainStore -o timeline.html
              logtool timeline --as-store 1A2B3C4D-STORE cloud/MainStore -o device.html
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup var options: ReadingOptions
    @OptionGroup var modelVersions: ModelVersionOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("The page to write (default: standard output).", valueName: "FILE"), completion: .file())
    var output: String?

    @Option(name: .customLong("as-store"), help: ArgumentHelp("Also show what device STORE holds back (Spec/merge.md 15).", valueName: "STORE"))
    var asStore: String?

    @Flag(name: .long, help: "Replace FILE if it exists.")
    var force = false

    @Argument(help: "A cloud folder: an ensemble folder or a root.", completion: .directory)
    var path: String

    func validate() throws { try options.validateModelVersion() }

    func run() throws {
        if let output { try checkDestination(output, force: force, existsCode: .timelineDestinationExists) }
        let ensemble = Ensemble(inputs: [path], options: try options.ensembleOptions(modelVersions))
        let reports: [TimelineReport]
        do {
            reports = try ensemble.timeline(asStore: asStore)
        } catch {
            throw reportAndExit(error)
        }
        let page = Data(TimelinePage.html(reports, source: path, asStore: asStore).utf8)
        guard let output else { return Console.out(page) }
        // Written beside the destination and renamed once complete.
        let destination = URL(fileURLWithPath: output).standardizedFileURL
        let temporary = TemporaryFiles.reserveSibling(of: destination)
        defer { TemporaryFiles.release(temporary) }
        do {
            let handle = try TemporaryFiles.openFile(temporary)
            defer { try? handle.close() }
            try handle.write(contentsOf: page)
            try handle.synchronize()
        } catch {
            writeStandardError("logtool: \(escaped(output)): the page could not be written: \(error.localizedDescription)")
            throw ToolExit(status: .problemsFound)
        }
        try publishOutput(
            temporary, at: destination, path: output, replacing: force, what: "the page", existsCode: .timelineDestinationExists, failure: .problemsFound)
    }
}
