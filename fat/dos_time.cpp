// DOS date/time codecs and the directory entry's time fields (dirent.hpp
// holds their bit layout).
#include "fat/dirent.hpp"

namespace fat {

DosDateTime encode_dos_datetime(const std::tm& tm) {
  // DOS years run 1980..2107 (seven bits from 1980); tm_year counts from 1900.
  if (tm.tm_year < 80 || tm.tm_year > 207) return kDosEpoch;
  DosDateTime dt;
  dt.date = std::uint16_t((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday);
  dt.time = std::uint16_t(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2);
  dt.tenths = std::uint8_t((tm.tm_sec % 2) * 100);
  return dt;
}

void set_times(DirEntry& entry, DosDateTime when) {
  entry.create_time_tenth = when.tenths;
  entry.create_time = when.time;
  entry.create_date = when.date;
  entry.access_date = when.date;
  entry.write_time = when.time;
  entry.write_date = when.date;
}

std::tm decode_dos_datetime(DosDateTime dt) {
  std::tm tm{};
  tm.tm_year = (dt.date >> 9) + 80;
  tm.tm_mon = ((dt.date >> 5) & 0x0F) - 1;
  tm.tm_mday = dt.date & 0x1F;
  tm.tm_hour = dt.time >> 11;
  tm.tm_min = (dt.time >> 5) & 0x3F;
  tm.tm_sec = (dt.time & 0x1F) * 2 + dt.tenths / 100;
  return tm;
}

}  // namespace fat
