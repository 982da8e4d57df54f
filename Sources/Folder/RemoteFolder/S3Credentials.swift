import Foundation
import JSONDocument

extension FormatError.Code {
    /// The remote folder's credentials cannot be had: a password without a user, a password
    /// file that cannot be read, half of an AWS key pair, or a named AWS profile that no file
    /// holds (Spec/remote.md 7, 11.6).
    package static let remoteCredentials = Self("remote.credentials")
}

/// AWS credentials for an S3 folder, found as the AWS tools find them (Spec/remote.md 11.6):
/// the environment, then the shared credentials file, then the config file, for the profile
/// `AWS_PROFILE` names (else `default`). Never from an argument, and never written to output,
/// an error or the manifest: `description` hides them.
package struct S3Credentials: Sendable, CustomStringConvertible {
    package let accessKeyID: String
    package let secretAccessKey: String
    /// A temporary credential's token (`x-amz-security-token`).
    package let sessionToken: String?

    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    package var description: String { "S3Credentials(hidden)" }

    /// The files' largest size read: a credentials file is a few lines.
    static let maximumFileBytes = 1 << 20

    /// The credentials `environment` leads to, or nil when there are none (requests then go
    /// unsigned). Errors name variables, files and profiles, never a key.
    package static func resolve(environment: [String: String]) throws(FormatError) -> S3Credentials? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let key = value("AWS_ACCESS_KEY_ID"), secret = value("AWS_SECRET_ACCESS_KEY")
        if key != nil || secret != nil {
            guard let key, let secret else {
                throw FormatError(.remoteCredentials, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set only one without the other")
            }
            return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
        }
        let named = value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE")
        let profile = named ?? "default"
        let credentialsFile = try read(path(value("AWS_SHARED_CREDENTIALS_FILE") ?? "~/.aws/credentials", environment))
        let configFile = try read(path(value("AWS_CONFIG_FILE") ?? "~/.aws/config", environment))
        // The credentials file names a profile `[NAME]`; the config file `[profile NAME]`, but
        // `[default]` for the default one.
        let sections = [
            (credentialsFile, profile, "the shared credentials file"),
            (configFile, profile == "default" ? "default" : "profile \(profile)", "the config file"),
        ]
        var found = false
        for (file, section, what) in sections {
            guard let settings = file.flatMap({ parse($0)[section] }) else { continue }
            found = true
            let key = settings["aws_access_key_id"], secret = settings["aws_secret_access_key"]
            if key == nil && secret == nil { continue }
            guard let key, let secret, !key.isEmpty, !secret.isEmpty else {
                throw FormatError(.remoteCredentials, "the profile \(profile) in \(what) has only one of aws_access_key_id and aws_secret_access_key")
            }
            return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: settings["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 })
        }
        if let named, !found {
            throw FormatError(.remoteCredentials, "the profile \(named) (AWS_PROFILE) is in neither the shared credentials file nor the config file")
        }
        return nil
    }

    /// The region as the AWS tools choose it when `--region` is not given: `AWS_REGION`,
    /// `AWS_DEFAULT_REGION`, then the profile's `region` in the config file; nil for none.
    package static func region(environment: [String: String]) -> String? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") { return region }
        let profile = value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE") ?? "default"
        guard let file = try? read(path(value("AWS_CONFIG_FILE") ?? "~/.aws/config", environment)) else { return nil }
        return parse(file)[profile == "default" ? "default" : "profile \(profile)"]?["region"]
    }

    private static func path(_ path: String, _ environment: [String: String]) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        return (environment["HOME"] ?? NSHomeDirectory()) + path.dropFirst()
    }

    /// A file's text, nil when it does not exist (the AWS tools ignore a missing file).
    private static func read(_ path: String) throws(FormatError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.read(upToCount: maximumFileBytes + 1),
            data.count <= maximumFileBytes, let text = String(data: data, encoding: .utf8)
        else {
            throw FormatError(
                .remoteCredentials, "an AWS credentials or config file cannot be read, is not UTF-8 or is larger than 1 MiB", location: .init(file: path))
        }
        return text
    }

    /// An INI file as the AWS tools read it: `[section]` lines, `name = value` settings (names
    /// lower-cased, values trimmed), `#` and `;` comment lines; indented lines continue a
    /// nested setting and are skipped.
    static func parse(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            if raw.first == " " || raw.first == "\t" { continue }
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                current = name
                if sections[name] == nil { sections[name] = [:] }
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            sections[current, default: [:]][name] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        return sections
    }
}
