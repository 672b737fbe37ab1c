// Reference firmware for a Guandan table: one MFRC522 (13.56 MHz) reader under each seat's
// play area, all on one ESP32 (or Arduino), reporting tags as JSON Lines on USB serial:
//
//   {"reader":"T01","ant":0,"uid":"04A1B2C3","seq":17}
//
//   reader  this board's id (set READER_ID per table)
//   ant     index of the MFRC522 that saw the tag: 0 = S, 1 = E, 2 = N, 3 = W by default
//           (the host maps indexes to seats: `guandan-ref rfid listen --antennas FILE`)
//   uid     tag UID, upper-case hex (4 or 7 bytes)
//   seq     line counter; the host counts gaps (lost lines) and restarts (a step back)
//
// Every tag in a field is reported on every scan round (about 10 per second), so the host
// sees a card for as long as it lies there; debouncing is the host's job. Several cards in
// one field are read one by one: wake all (WUPA), select one by anticollision, report it,
// halt it (HLTA), then REQA finds the next card still idle, until none answers.
//
// Build: Arduino IDE or arduino-cli with the "MFRC522" library (miguelbalboa), board
// esp32:esp32:esp32 (or arduino:avr:mega). Wiring in README.md next to this sketch.

#include <SPI.h>
#include <MFRC522.h>

#define READER_ID "T01"
#define SERIAL_BAUD 115200
#define MAX_TAGS_PER_ROUND 12   // a play holds at most 10 cards
#define ROUND_MS 100

#if defined(ESP32)
const uint8_t SS_PINS[] = {5, 17, 16, 4};   // one chip-select per reader: S, E, N, W
const uint8_t RST_PIN = 22;                 // shared reset
#else
const uint8_t SS_PINS[] = {10, 9, 8, 7};
const uint8_t RST_PIN = 6;
#endif
const uint8_t READERS = sizeof(SS_PINS) / sizeof(SS_PINS[0]);

MFRC522 mfrc[READERS];
uint32_t seq = 0;

void report(uint8_t ant, const MFRC522::Uid &uid) {
  char hex[2 * 10 + 1];
  for (uint8_t i = 0; i < uid.size; i++) {
    sprintf(hex + 2 * i, "%02X", uid.uidByte[i]);
  }
  hex[2 * uid.size] = '\0';
  Serial.print("{\"reader\":\"" READER_ID "\",\"ant\":");
  Serial.print(ant);
  Serial.print(",\"uid\":\"");
  Serial.print(hex);
  Serial.print("\",\"seq\":");
  Serial.print(++seq);
  Serial.println("}");
}

// One scan round of one reader: every card in its field, each once.
void scan(uint8_t ant) {
  MFRC522 &r = mfrc[ant];
  byte atqa[2];
  byte size = sizeof(atqa);
  for (uint8_t n = 0; n < MAX_TAGS_PER_ROUND; n++) {
    size = sizeof(atqa);
    MFRC522::StatusCode status = n == 0 ? r.PICC_WakeupA(atqa, &size) : r.PICC_RequestA(atqa, &size);
    if (status != MFRC522::STATUS_OK && status != MFRC522::STATUS_COLLISION) break;
    if (r.PICC_Select(&r.uid) != MFRC522::STATUS_OK) break;
    report(ant, r.uid);
    r.PICC_HaltA();
  }
}

void setup() {
  Serial.begin(SERIAL_BAUD);
  SPI.begin();
  for (uint8_t i = 0; i < READERS; i++) {
    mfrc[i].PCD_Init(SS_PINS[i], RST_PIN);
  }
}

void loop() {
  uint32_t start = millis();
  for (uint8_t i = 0; i < READERS; i++) {
    scan(i);
  }
  uint32_t spent = millis() - start;
  if (spent < ROUND_MS) delay(ROUND_MS - spent);
}
