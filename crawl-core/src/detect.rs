//! Evidence that a page needs JavaScript to show its content (auto render mode).

/// Why a page fetched over HTTP should be rendered in the browser, if it should.
pub fn needs_render(html: &str, text_len: usize, script_bytes: usize) -> Option<&'static str> {
    let _ = html;
    if text_len < 200 && script_bytes > 20_000 {
        return Some("little_text_big_script");
    }
    None
}
