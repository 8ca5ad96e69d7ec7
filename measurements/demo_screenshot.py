#!/usr/bin/env python
"""Screenshot of `hf-seq2seq demo` after one translation, taken by headless Chromium (for the README).

    python measurements/demo_screenshot.py runs/cpu docs/demo.png
    python measurements/demo_screenshot.py runs/cpu docs/demo.png --sentence "Where is the station?" --beams 4

Needs the demo extra and Debian's chromium + chromium-driver.
"""

import argparse
import shutil
import socket

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from hf_seq2seq.apps.demo import BEAM, EXAMPLES, launch_demo


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="a saved model folder or a Hub repository id")
    p.add_argument("out", help="PNG to write")
    p.add_argument("--sentence", default=EXAMPLES[1], help="what to translate (default: %(default)s)")
    p.add_argument("--beams", type=int, default=0, help="beam search with this many beams (default: greedy)")
    p.add_argument("--report", action="append", default=[], help="an extra result file to show; repeatable")
    p.add_argument("--width", type=int, default=1400, help="window width in pixels (default: %(default)s)")
    args = p.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo = launch_demo(args.model, port=port, reports=args.report, block=False)
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        f"--window-size={args.width},1000",
    ):
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(shutil.which("chromedriver")))
    wait = WebDriverWait(browser, 120)
    try:
        browser.get(f"http://127.0.0.1:{port}/")
        source = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, "#source textarea"))
        source.send_keys(args.sentence)
        if args.beams:
            browser.find_element(By.XPATH, f"//label[contains(., '{BEAM}')]").click()
            beams = browser.find_element(By.CSS_SELECTOR, "input[type=number]")
            beams.send_keys(Keys.CONTROL + "a", str(args.beams), Keys.TAB)
        browser.find_element(By.ID, "translate").click()
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#attention img"))
        wait.until(lambda b: "Decoded in" in b.find_element(By.ID, "timing").text)
        height = browser.execute_script("return document.documentElement.scrollHeight")
        metrics = {"width": args.width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)  # the whole page
        browser.save_screenshot(args.out)
        print(args.out)
    finally:
        browser.quit()
        demo.close()


if __name__ == "__main__":
    main()
