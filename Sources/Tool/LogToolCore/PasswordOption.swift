import Foundation
import EnsemblesToolkit

/// Where `logtool` takes the password of an encrypted folder from (Spec/wrappers.md 5.4): a file
/// (`--password-file`), the environment (`LOGTOOL_PASSWORD`), or a prompt without echo when
/// standard input is a terminal, asked only when an encrypted file is met and, after a wrong
/// answer, again (Spec/wrappers.md 5.5). Never an argument: other users can read a process's
/// arguments.
extension FormatError.Code {
    /// `--password-file FILE` cannot be read, holds no password or is too long (Spec/wrappers.md 5.4).
    static let wrapPasswordFile = Self("wrap.password-file")
    /// `convert --encrypt` asked twice on a terminal got two different answers (wrappers.md 8).
    static let wrapPasswordMismatch = Self("wrap.password-mismatch")
}

package enum PasswordOption {
    static let environmentVariable = "LOGTOOL_PASSWORD"
    /// The largest password file read (Spec/wrappers.md 5.4): at most one byte more is read, so
    /// a large file given by mistake is refused without being loaded.
    static let maximumFileBytes = 64 * 1024

    /// The password source for `file` (the `--password-file` value), or nil when no password can
    /// be had; a file that cannot be read, or holds no password, is a usage error.
    static func source(file: String?) throws -> PasswordSource? {
        if let file {
            guard let handle = FileHandle(forReadingAtPath: file), let data = try? handle.read(upToCount: maximumFileBytes + 1) ?? Data() else {
                writeErrors([FormatError(.wrapPasswordFile, "the password file could not be read", location: .init(file: file))])
                throw ToolExit(status: .usage)
            }
            try? handle.close()
            guard data.count <= maximumFileBytes else {
                writeErrors([
                    FormatError(
                        .wrapPasswordFile, "the password file is larger than \(maximumFileBytes) bytes, the limit of a password file; it was not read",
                        location: .init(file: file))
                ])
                throw ToolExit(status: .usage)
            }
            guard let password = password(fromFile: [UInt8](data)) else {
                writeErrors([FormatError(.wrapPasswordFile, "the password file holds no password", location: .init(file: file))])
                throw ToolExit(status: .usage)
            }
            return PasswordSource { .password(password) }
        }
        if let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty {
            return PasswordSource(password: value)
        }
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        return promptSource { prompt($0) }
    }

    /// How many answers a terminal gets for a wrong password in all, as sudo gives
    /// (Spec/wrappers.md 5.5); a password from a file or the environment gets one.
    package static let promptAttempts = 3

    /// The source of a password asked on a terminal by `ask` (given the question): asked again
    /// after a wrong answer, ``promptAttempts`` answers in all.
    package static func promptSource(_ ask: @escaping @Sendable (_ question: String) -> [UInt8]?) -> PasswordSource {
        PasswordSource(attempts: promptAttempts) { attempt in
            ask(attempt == 1 ? "Password of the encrypted folder: " : "Wrong password; try again: ").map { .password($0) }
        }
    }

    /// The password a command that writes encrypted files uses (`convert --encrypt`, Spec/wrappers.md
    /// 3.3 and 5.4): from the same places as a reading password, but resolved at once, and a
    /// prompt asks twice and compares, since a mistyped password would lock the folder for good.
    /// No password, an empty one or two answers that differ are usage errors.
    static func writingPassword(file: String?) throws -> [UInt8] {
        let fromEnvironment = ProcessInfo.processInfo.environment[environmentVariable]?.isEmpty == false
        if file != nil || fromEnvironment, case .password(let password)? = try source(file: file)?.credentials() {
            return password
        }
        guard isatty(STDIN_FILENO) == 1 else {
            writeErrors([
                FormatError(
                    .wrapPasswordRequired, "--encrypt needs a password: give --password-file FILE, set \(environmentVariable), or run on a terminal to be asked"
                )
            ])
            throw ToolExit(status: .usage)
        }
        guard let first = prompt("New password of the encrypted folder: ") else {
            writeErrors([FormatError(.wrapPasswordRequired, "an empty password encrypts nothing; none was written")])
            throw ToolExit(status: .usage)
        }
        guard prompt("The same password again: ") == first else {
            writeErrors([FormatError(.wrapPasswordMismatch, "the two passwords differ; nothing was written")])
            throw ToolExit(status: .usage)
        }
        return first
    }

    /// The file's bytes without one final LF or CR LF; nil when nothing is left.
    static func password(fromFile bytes: [UInt8]) -> [UInt8]? {
        var password = bytes
        if password.last == 0x0A { password.removeLast() }
        if password.last == 0x0D { password.removeLast() }
        return password.isEmpty ? nil : password
    }

    /// Asks on standard error and reads one line from the terminal with echo off.
    static func prompt(_ question: String = "Password of the encrypted folder: ") -> [UInt8]? {
        Console.err(Data(question.utf8))
        var saved = termios()
        let canRestore = tcgetattr(STDIN_FILENO, &saved) == 0
        if canRestore {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        }
        defer {
            if canRestore { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
            Console.err(Data("\n".utf8))
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) == 1, byte != 0x0A {
            line.append(byte)
            if line.count > 4096 { break }
        }
        if line.last == 0x0D { line.removeLast() }
        return line.isEmpty ? nil : line
    }
}
