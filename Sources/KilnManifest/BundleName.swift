import KilnC
import KilnCore

/// Bundle names: they become file names (`build/<bundle>.sqlite`) and folder names (`raw/<bundle>`).
public enum BundleName {
    /// True for a non-empty name of letters, digits, `-`, `_` and `.` that does not start with `.`.
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && name.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
    }
}
