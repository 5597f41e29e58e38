/// The version `sluice --version` prints and every run report names (CHANGELOG.md lists what each
/// version changed).
public enum SluiceVersion {
    public static let current = "0.17.0"
}
