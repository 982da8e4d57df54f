import Foundation

/// How many rounds the seeded tests run: a few in the suite that CI runs on every change, many
/// when `LOGTOOL_LONG_TESTS=1` asks for the long run by hand (README, "Long checks"). The
/// seeds are fixed either way, so that the short run is the first part of the long one.
public enum LongRun {
    /// True when `LOGTOOL_LONG_TESTS` is set to anything but empty or `0`.
    public static var isOn: Bool {
        let value = ProcessInfo.processInfo.environment["LOGTOOL_LONG_TESTS"] ?? ""
        return !(value.isEmpty || value == "0")
    }

    /// `short` in the suite, `long` in the long run.
    public static func count(_ short: Int, long: Int) -> Int { isOn ? long : short }
}
