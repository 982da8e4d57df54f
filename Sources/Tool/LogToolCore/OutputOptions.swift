import ArgumentParser
import Foundation

/// What every command takes to say how much it prints beside its results (Spec/README.md 5.4).
struct OutputOptions: ParsableArguments {
    @Flag(name: [.customShort("q"), .long], help: "Print no warnings and no progress line; results and errors only.")
    var quiet = false

    // Two flags rather than an optional inverted one, whose help text argument-parser cannot
    // draw (it reads the flag's value to show a default).
    @Flag(help: "Draw a progress line on standard error for long work (default: when it is a terminal).")
    var progress = false

    @Flag(help: "Draw no progress line.")
    var noProgress = false

    func validate() throws {
        guard !(progress && noProgress) else { throw ValidationError("give --progress or --no-progress, not both") }
    }

    /// An explicit `--progress` or `--no-progress` wins; `--quiet` draws none; otherwise the
    /// line is drawn when standard error is a terminal, so nothing reaches a pipe or a file.
    func drawsProgress(onTerminal: Bool) -> Bool {
        progress || (!noProgress && !quiet && onTerminal)
    }
}

/// A command with ``OutputOptions``; ``LogTool/run(arguments:drawsProgress:)`` applies them.
protocol HasOutputOptions {
    var outputOptions: OutputOptions { get }
}

/// The progress line's text: `step: done/total (percent)`, and once a second has passed the
/// rate and the time left at that rate (Spec/README.md 5.4).
enum ProgressLine {
    static func render(step: String, done: Int, total: Int, elapsed: Double) -> String {
        var text = "\(step): \(done)/\(total)"
        guard total > 0 else { return text }
        text += " (\(min(100, done * 100 / total))%)"
        guard elapsed >= 1, done > 0 else { return text }
        let rate = Double(done) / elapsed
        text += ", \(Int(rate.rounded()))/s"
        if done < total {
            let left = Int((Double(total - done) / rate).rounded(.up))
            text += ", \(left / 60):\(String(format: "%02d", left % 60)) left"
        }
        return text
    }
}
