import ArgumentParser

/// `--dates FILE`, shared by every command that reads a TICoreDataSync folder.
struct TICDSDatesOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "For a TICoreDataSync folder: a JSON object of paths to dates (seconds since 1970) replacing the files' modification times (Spec/ticds.md 6.5).",
            valueName: "FILE"), completion: .file())
    var dates: String?
}

/// `--backend-identity TOKEN`, shared by every command that reads a device folder.
struct BackendIdentityOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("For a device folder: the backend's current identity token (condition 202).", valueName: "token"))
    var backendIdentity: String?
}
