import KilnC

/// Kiln's version.
public enum KilnVersion {
    public static let current = "0.1.0"
}
