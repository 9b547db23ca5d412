/// The words larder's tools take for on and off (`LARDER_TLS=1`, `--tls-only=yes`), any case.
public enum SwitchText {
    /// True for 1, true, yes and on; false for 0, false, no and off; nil for anything else.
    public static func value(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes", "on": true
        case "0", "false", "no", "off": false
        default: nil
        }
    }

    /// Why `text`, given for `name`, was refused: the words `value` takes.
    public static func refusal(_ text: String, name: String) -> String {
        "\(name) must be 1, true, yes or on (or 0, false, no or off), got \"\(text)\""
    }
}
